// Passkeys: the buttons marked data-passkey run a WebAuthn ceremony
// against the console's JSON routes. Their boxes stay hidden where the
// browser has no WebAuthn, so without it (or without JavaScript) the pages
// offer only what works: passwords and codes. No inline script or style:
// the console's CSP allows neither.
(function () {
  "use strict";
  if (!window.PublicKeyCredential || !navigator.credentials) {
    return;
  }

  // base64url <-> ArrayBuffer: the server's JSON carries binary fields as
  // base64url; WebAuthn wants and gives ArrayBuffers.
  function toBuffer(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) {
      s += "=";
    }
    var bin = atob(s);
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) {
      out[i] = bin.charCodeAt(i);
    }
    return out.buffer;
  }
  function toBase64url(buf) {
    var bytes = new Uint8Array(buf);
    var s = "";
    for (var i = 0; i < bytes.length; i++) {
      s += String.fromCharCode(bytes[i]);
    }
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  // The CSRF token is the one the layout gives htmx.
  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRF-Token"] || "";
    } catch (e) {
      return "";
    }
  }

  async function post(url, body) {
    var res = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
      body: JSON.stringify(body || {}),
    });
    var data = {};
    try {
      data = await res.json();
    } catch (e) {
      data = {};
    }
    if (!res.ok) {
      throw new Error(data.message || "The passkey was not accepted.");
    }
    return data;
  }

  function finishURL(btn, challenge, extra) {
    var q = "?challenge=" + encodeURIComponent(challenge);
    if (btn.dataset.passkeyNext) {
      q += "&next=" + encodeURIComponent(btn.dataset.passkeyNext);
    }
    return btn.dataset.passkeyFinish + q + (extra || "");
  }

  // publicKeyOptions turns the server's options into what WebAuthn takes:
  // the challenge, the user's id and the credential ids as ArrayBuffers.
  function publicKeyOptions(options) {
    var pk = options.publicKey;
    pk.challenge = toBuffer(pk.challenge);
    if (pk.user) {
      pk.user.id = toBuffer(pk.user.id);
    }
    (pk.excludeCredentials || []).concat(pk.allowCredentials || []).forEach(function (c) {
      c.id = toBuffer(c.id);
    });
    return pk;
  }

  // credentialJSON is the browser's answer as the server reads it, its
  // binary fields base64url: a new credential's attestation, or a sign-in's
  // assertion.
  function credentialJSON(cred) {
    var r = cred.response;
    var response = { clientDataJSON: toBase64url(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = toBase64url(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      response.authenticatorData = toBase64url(r.authenticatorData);
      response.signature = toBase64url(r.signature);
      response.userHandle = r.userHandle ? toBase64url(r.userHandle) : null;
    }
    return {
      id: cred.id,
      rawId: toBase64url(cred.rawId),
      type: cred.type,
      authenticatorAttachment: cred.authenticatorAttachment,
      clientExtensionResults: cred.getClientExtensionResults(),
      response: response,
    };
  }

  // run begins the button's ceremony (a new passkey's with the password or
  // code typed beside it), lets the browser answer it (a new passkey, with
  // the name typed beside it, or a sign-in) and posts the answer; the
  // server says where to go next.
  async function run(btn) {
    var proof = document.getElementById(btn.dataset.passkeyProof || "");
    var start = await post(btn.dataset.passkeyOptions, proof ? { proof: proof.value } : {});
    var pk = publicKeyOptions(start.options);
    var extra = "";
    var cred;
    if (btn.dataset.passkey === "register") {
      cred = await navigator.credentials.create({ publicKey: pk });
      var name = document.getElementById(btn.dataset.passkeyName);
      extra = "&name=" + encodeURIComponent(name ? name.value : "");
    } else {
      cred = await navigator.credentials.get({ publicKey: pk });
    }
    var done = await post(finishURL(btn, start.challenge, extra), credentialJSON(cred));
    location.assign(done.redirect);
  }

  function showError(btn, msg) {
    var out = document.getElementById(btn.dataset.passkeyError);
    if (out) {
      out.textContent = msg;
      out.hidden = false;
    }
  }

  document.querySelectorAll("[data-passkey]").forEach(function (btn) {
    var box = btn.closest("[data-passkey-box]");
    if (box) {
      box.hidden = false;
    }
    btn.addEventListener("click", function () {
      btn.disabled = true;
      run(btn).catch(function (err) {
        btn.disabled = false;
        showError(btn, err && err.name === "NotAllowedError" ? "The passkey request was cancelled or timed out." : (err && err.message) || String(err));
      });
    });
  });
})();
