// Starts Swagger UI on /docs. A file, not an inline script, under the
// page's strict CSP. The OpenAPI document's URL comes from the page
// (data-spec-url, relative to it), so the reference describes the API this
// page was served with, path prefix included.
//
// BaseLayout, not the standalone preset: the preset's top bar carries an
// inline <style> the CSP refuses. No validator badge (it would call
// validator.swagger.io), and a key pasted into Authorize stays in this
// tab's memory only (persistAuthorization: false keeps it out of
// localStorage). Only the methods the API has can be tried. No deep links:
// Swagger UI puts each one inside the operation's toggle button, a link
// inside a button that keyboard and screen reader users cannot reach
// apart (and a target too small to tap).
(function () {
  "use strict";
  // Swagger UI's own dark theme hangs on html.dark-mode: follow the
  // system's scheme, as the page's frame (docs.css) does.
  var dark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  function scheme() {
    document.documentElement.classList.toggle("dark-mode", !!(dark && dark.matches));
  }
  scheme();
  if (dark && dark.addEventListener) dark.addEventListener("change", scheme);

  var root = document.getElementById("swagger-ui");
  if (!root) return;

  // Swagger UI renders some controls without a name; name them as they
  // appear (it renders again as the reader opens operations): the server
  // choice, and each parameter's field by the parameter's name.
  function name() {
    var servers = root.querySelector("select#servers:not([aria-label])");
    if (servers) servers.setAttribute("aria-label", "Server");
    root.querySelectorAll("tr[data-param-name]").forEach(function (row) {
      row.querySelectorAll("select:not([aria-label]), input:not([aria-label]), textarea:not([aria-label])").forEach(function (c) {
        c.setAttribute("aria-label", row.getAttribute("data-param-name"));
      });
    });
  }
  new MutationObserver(name).observe(root, { childList: true, subtree: true });

  function start() {
    if (typeof window.SwaggerUIBundle !== "function") return;
    window.ui = window.SwaggerUIBundle({
      url: new URL(root.getAttribute("data-spec-url"), document.baseURI).href,
      domNode: root,
      layout: "BaseLayout",
      validatorUrl: null,
      deepLinking: false,
      // Plain examples: the highlighter's colours are inline styles, some
      // under 4.5:1 on its dark background, that no stylesheet can reach.
      syntaxHighlight: { activated: false },
      tryItOutEnabled: true,
      persistAuthorization: false,
      displayRequestDuration: true,
      showExtensions: false,
      supportedSubmitMethods: ["get", "post"],
    });
  }

  // Swagger UI's bundle (1.7 MB of script, 440 KB compressed) is loaded
  // once the page has painted, so that its own title and introduction show
  // at once instead of waiting for the bundle to download and run. The
  // paint is the browser's first-contentful-paint entry; a browser without
  // it, or a tab that does not paint (hidden), loads it anyway.
  var loaded = false;
  function load() {
    if (loaded) return;
    loaded = true;
    var s = document.createElement("script");
    s.src = new URL(root.getAttribute("data-swagger-js"), document.baseURI).href;
    s.onload = start;
    document.head.appendChild(s);
  }
  var types = window.PerformanceObserver && PerformanceObserver.supportedEntryTypes;
  if (document.visibilityState === "hidden" || !types || types.indexOf("paint") < 0) {
    load();
    return;
  }
  new PerformanceObserver(function (list, observer) {
    if (list.getEntriesByName("first-contentful-paint").length > 0) {
      observer.disconnect();
      setTimeout(load, 0);
    }
  }).observe({ type: "paint", buffered: true });
  setTimeout(load, 3000);
})();
