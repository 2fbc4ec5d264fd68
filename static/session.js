/* The form session page while its run is busy: ask where the run is every 0.5 s and reload once it shows a form,
   ends or fails. Without this script the page refreshes itself every 2 s (its Refresh header) all the same. */
(function () {
  "use strict";
  var page = document.querySelector("[data-session-state]");
  if (!page || !window.fetch) { return; }
  // Relative to the page's own address (/form/run/{key}), so it works under any host or path a proxy serves.
  var url = new URL(location.pathname.split("/").pop() + "/state", location.href);
  function ask() {
    fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : { state: "gone" }; })
      .then(function (answer) {
        if (answer.state !== page.getAttribute("data-session-state")) { location.reload(); }
        else { setTimeout(ask, 500); }
      })
      .catch(function () { setTimeout(ask, 2000); });
  }
  setTimeout(ask, 500);
}());
