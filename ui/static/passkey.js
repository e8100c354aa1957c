// Passkeys (WebAuthn): a <form data-passkey="login|register"
// data-begin="URL" data-finish="URL" hidden> is shown where the browser
// has passkeys. Submitting it posts the form's fields to data-begin, asks
// the browser for a passkey with the options that come back, posts the
// answer to data-finish and follows the redirect it names.
(function () {
  "use strict";
  if (!window.PublicKeyCredential || !navigator.credentials) {
    return;
  }
  function toBuffer(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) {
      s += "=";
    }
    var bin = atob(s);
    var b = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) {
      b[i] = bin.charCodeAt(i);
    }
    return b.buffer;
  }
  function toText(buf) {
    if (!buf) {
      return undefined;
    }
    var b = new Uint8Array(buf);
    var s = "";
    for (var i = 0; i < b.length; i++) {
      s += String.fromCharCode(b[i]);
    }
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function post(url, fields, failed) {
    return fetch(url, {
      method: "POST", body: new URLSearchParams(fields), credentials: "same-origin",
      headers: { "Accept": "application/json" }
    }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) {
          throw new Error(j.error || failed);
        }
        return j;
      });
    });
  }
  function credentialJSON(c) {
    var r = c.response;
    var out = { id: c.id, rawId: toText(c.rawId), type: c.type, authenticatorAttachment: c.authenticatorAttachment || undefined,
      clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {}, response: { clientDataJSON: toText(r.clientDataJSON) } };
    if (r.attestationObject) {
      out.response.attestationObject = toText(r.attestationObject);
      out.response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      out.response.authenticatorData = toText(r.authenticatorData);
      out.response.signature = toText(r.signature);
      out.response.userHandle = toText(r.userHandle);
    }
    return JSON.stringify(out);
  }
  document.querySelectorAll("form[data-passkey]").forEach(function (form) {
    var register = form.getAttribute("data-passkey") === "register";
    var status = form.querySelector(".passkey-status");
    var button = form.querySelector("button");
    // The page's language: the template puts the two sentences the script
    // may show on the form; English when it does not.
    var failed = form.getAttribute("data-msg-failed") || "The request failed.";
    var noneUsed = form.getAttribute("data-msg-none") || "No passkey was used.";
    form.hidden = false;
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var fields = {};
      new FormData(form).forEach(function (v, k) { fields[k] = v; });
      if (status) {
        status.hidden = true;
      }
      button.disabled = true;
      post(form.getAttribute("data-begin"), fields, failed).then(function (begin) {
        var o = begin.options.publicKey;
        o.challenge = toBuffer(o.challenge);
        var list = register ? o.excludeCredentials : o.allowCredentials;
        (list || []).forEach(function (c) { c.id = toBuffer(c.id); });
        var asked;
        if (register) {
          o.user.id = toBuffer(o.user.id);
          asked = navigator.credentials.create({ publicKey: o });
        } else {
          asked = navigator.credentials.get({ publicKey: o });
        }
        return asked.then(function (c) {
          fields.ceremony = begin.ceremony;
          fields.credential = credentialJSON(c);
          return post(form.getAttribute("data-finish"), fields, failed);
        });
      }).then(function (done) {
        window.location.assign(done.redirect);
      }).catch(function (err) {
        button.disabled = false;
        if (status) {
          status.textContent = err && err.name === "NotAllowedError" ? noneUsed : String(err && err.message || err);
          status.hidden = false;
        }
      });
    });
  });
})();
