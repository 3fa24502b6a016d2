// Small enhancements of the console. Everything works without this file;
// it is loaded as a file (no inline script) under the page's CSP.
(function () {
  "use strict";

  // Copy buttons: <button data-copy="#id"> copies that element's value or text.
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source) return;
    var text = source.value !== undefined ? source.value : source.textContent;
    var done = function () {
      var label = button.textContent;
      button.textContent = "Copied";
      button.setAttribute("aria-live", "polite");
      setTimeout(function () { button.textContent = label; }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done);
    } else {
      source.select && source.select();
      document.execCommand("copy");
      done();
    }
  });

  // Errors of htmx requests that are not swapped get a visible message.
  function showError(text) {
    var region = document.getElementById("flash");
    if (!region) return;
    region.textContent = "";
    var p = document.createElement("p");
    p.className = "flash flash-error";
    p.setAttribute("role", "alert");
    p.setAttribute("data-testid", "flash");
    p.textContent = text;
    region.appendChild(p);
  }
  // A request the member's role does not allow: the error page's own
  // message says which role it needs (parsed, never run: DOMParser
  // documents execute no script, and only the text is taken).
  function refusalMessage(xhr) {
    if (!xhr || xhr.getResponseHeader("Petstore-Refusal") !== "role") return "";
    var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
    var p = doc.querySelector(".error-page p");
    return p ? p.textContent.trim() : "";
  }
  // A request refused for what it asked (a list address with a bad value):
  // the answer's own message, parsed the same way.
  function badRequestMessage(xhr) {
    if (!xhr || xhr.status !== 400) return "";
    var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
    var p = doc.querySelector("[data-testid=flash]");
    return p ? p.textContent.trim() : "";
  }
  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    var refused = refusalMessage(event.detail.xhr) || badRequestMessage(event.detail.xhr);
    if (refused) {
      showError(refused);
    } else if (status === 403) {
      showError("The page has expired, so nothing was changed. Reload the page and try again.");
    } else if (status === 503) {
      showError("The store's database is not answering. Nothing was lost; try again in a moment.");
    } else {
      showError("Something went wrong (" + status + "). Reload the page and try again.");
    }
  });
  document.addEventListener("htmx:sendError", function () {
    showError("The console cannot reach the server. Check the connection and try again.");
  });

  // After htmx replaces a form, put the keyboard focus back into it: on the
  // first field with an error, or on the first field.
  // (With an outerHTML swap, detail.target is the old, removed form;
  // the event's own target is the new one.)
  document.addEventListener("htmx:afterSwap", function (event) {
    var region = event.target;
    // A region marked data-refocus-heading (a list an action just changed)
    // gives the focus to its heading, so the keyboard does not start over
    // from the top of the page.
    if (region && region.hasAttribute && region.hasAttribute("data-refocus-heading")) {
      var heading = region.querySelector("h2[tabindex]");
      if (heading) heading.focus();
      return;
    }
    var form = event.target;
    if (!form || form.tagName !== "FORM" || !form.hasAttribute("data-refocus")) return;
    var field = form.querySelector("[aria-invalid=true]") || form.querySelector("input:not([type=hidden]), select");
    if (field) field.focus();
  });

  // After htmx replaced the pets table for a bulk status change, the
  // keyboard focus goes back to the bulk form's button the answer marks
  // (its summary is announced by its own live region).
  document.addEventListener("htmx:afterSettle", function () {
    var target = document.querySelector("[data-focus-after-swap]");
    if (!target) return;
    target.removeAttribute("data-focus-after-swap");
    target.focus();
  });

  // "Select all on this page" ticks every row's box, and follows them:
  // ticked when all are, mixed when some are. Without this file the box
  // still works: the server then takes every pet of the page.
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (box.hasAttribute("data-select-all")) {
      document.querySelectorAll("[data-select-row]").forEach(function (row) { row.checked = box.checked; });
      box.indeterminate = false;
      return;
    }
    if (!box.hasAttribute("data-select-row")) return;
    var all = document.querySelector("[data-select-all]");
    if (!all) return;
    var rows = document.querySelectorAll("[data-select-row]");
    var ticked = document.querySelectorAll("[data-select-row]:checked").length;
    all.checked = ticked === rows.length;
    all.indeterminate = ticked > 0 && ticked < rows.length;
  });
  // A select marked data-apply-on-choice (the list's status filter)
  // changes the list once per choice: a pick with the mouse or by typing
  // a letter applies at once, while arrow keys only move through the
  // options, and the one reached applies on Enter or when the focus leaves
  // (an arrow key on a closed select fires change at each step, which
  // would send a request and add a Back step per key). The form's
  // hx-trigger listens for "choice".
  var browseKeys = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"];
  function choose(select) {
    select.removeAttribute("data-choice-pending");
    if (select.form) select.form.dispatchEvent(new Event("choice", { bubbles: true }));
  }
  document.addEventListener("keydown", function (event) {
    var select = event.target;
    if (!select.matches || !select.matches("select[data-apply-on-choice]")) return;
    if (browseKeys.indexOf(event.key) >= 0) {
      select.setAttribute("data-choice-browsing", "");
    } else if (event.key === "Enter" && select.hasAttribute("data-choice-pending")) {
      event.preventDefault();
      choose(select);
    }
  });
  document.addEventListener("change", function (event) {
    var select = event.target;
    if (!select.matches || !select.matches("select[data-apply-on-choice]")) return;
    if (select.hasAttribute("data-choice-browsing")) {
      select.removeAttribute("data-choice-browsing");
      select.setAttribute("data-choice-pending", "");
      return;
    }
    choose(select);
  });
  document.addEventListener("focusout", function (event) {
    var select = event.target;
    if (select.matches && select.matches("select[data-apply-on-choice][data-choice-pending]")) choose(select);
  });

  // A search for a pet's number ("#42") opens that pet's page: the filter
  // form then goes as a plain form (the server redirects), not through
  // htmx, which would put the pet's page in the table's place. (A capture
  // listener on the document runs before htmx's own on the form.)
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.id !== "pet-filter") return;
    var q = form.querySelector("[name=q]");
    if (q && /^\s*#\s*\d+\s*$/.test(q.value)) event.stopPropagation();
  }, true);

  // After a row's status change htmx replaces the row: the keyboard focus
  // goes back to the new row's status control, not to the page's start.
  var changedRow = "";
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    var row = elt && elt.closest ? elt.closest("tr[data-testid=pet-row]") : null;
    changedRow = row && elt.matches("form") ? row.id : "";
  });
  document.addEventListener("htmx:afterSettle", function () {
    if (!changedRow) return;
    var row = document.getElementById(changedRow);
    changedRow = "";
    var control = row ? row.querySelector("select[name=status]") : null;
    if (control) control.focus();
  });
})();
