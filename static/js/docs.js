// Starts Swagger UI on /docs. A file, not an inline script, under the
// page's strict CSP. The OpenAPI document's URL comes from the page
// (data-spec-url, relative to it), so the reference describes the API this
// page was served with, path prefix included.
//
// BaseLayout, not the standalone preset: the preset's top bar carries an
// inline <style> the CSP refuses. No validator badge (it would call
// validator.swagger.io), and a key pasted into Authorize stays in this
// tab's memory only (persistAuthorization: false keeps it out of
// localStorage). Only the methods the API has can be tried.
(function () {
  "use strict";
  var root = document.getElementById("swagger-ui");
  if (!root || typeof window.SwaggerUIBundle !== "function") return;
  window.ui = window.SwaggerUIBundle({
    url: new URL(root.getAttribute("data-spec-url"), document.baseURI).href,
    domNode: root,
    layout: "BaseLayout",
    validatorUrl: null,
    deepLinking: true,
    tryItOutEnabled: true,
    persistAuthorization: false,
    displayRequestDuration: true,
    showExtensions: false,
    supportedSubmitMethods: ["get", "post"],
  });
})();
