/* The form session page while its run is busy: ask where the run is every 0.5 s (every 15 s while it waits for
   someone else or a time) and reload once that changes. Without this script the page refreshes itself all the
   same (its Refresh header: every 2 s, or 30 s while waiting). */
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
        else { setTimeout(ask, answer.state === "waiting" ? 15000 : 500); }
      })
      .catch(function () { setTimeout(ask, 2000); });
  }
  setTimeout(ask, page.getAttribute("data-session-state") === "waiting" ? 15000 : 500);
}());
