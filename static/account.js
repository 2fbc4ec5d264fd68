// The owner's automation page (templates/accounts/automation.html): copy buttons, and a confirmation before a URL
// is renewed. Without this script the URLs can still be selected and copied, and renewing still works.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var done = function () {
      var label = button.textContent;
      button.textContent = button.getAttribute("data-copied");
      setTimeout(function () { button.textContent = label; }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(source.value).then(done, function () { source.select(); });
    } else {
      source.select();
      if (document.execCommand("copy")) done();
    }
  });
  document.addEventListener("submit", function (event) {
    var question = event.target.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
  });
})();
