// Copy buttons (progressive enhancement): a <button data-copy="ID" hidden>
// is shown where the Clipboard API exists and copies the text of element ID.
// Without JavaScript the value stays on the page to select by hand.
(function () {
  "use strict";
  if (!navigator.clipboard || !window.isSecureContext) {
    return;
  }
  var status = document.createElement("span");
  status.className = "visually-hidden";
  status.setAttribute("role", "status");
  document.body.appendChild(status);
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source) {
        return;
      }
      navigator.clipboard.writeText(source.textContent.trim()).then(function () {
        button.textContent = "Copied";
        status.textContent = "Copied to the clipboard.";
        setTimeout(function () {
          button.textContent = label;
          status.textContent = "";
        }, 2000);
      });
    });
  });
})();
