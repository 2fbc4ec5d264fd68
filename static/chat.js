/* The chat widget's page (templates/interfaces/chat.html): sends the visitor's messages and polls for replies.
   The conversation token travels in the X-Chat-Token header, never in a URL, and is kept in this frame's own
   storage (not a cookie: the frame is usually on another site's page), so a reload keeps the conversation. A
   browser that refuses storage to third-party frames gets it kept by embed.js in the site's own storage instead,
   asked for and handed over by postMessage, only with a parent page of a site the widget allows (data-frame-origins,
   the same list as the page's frame-ancestors): a token from any other parent is ignored, and the token is never
   posted to one (docs/interfaces.md).
   Polling, not server-sent events: an open stream would hold one of the web process's few threads per visitor.
   Right after the visitor sends (for EXPECTING ms) it polls every SOON ms, when a reply is most likely; then every
   FAST ms while the conversation is active (a message in the last ACTIVE ms), so a reply shows within a second of
   its step; every SLOW ms when idle, and every HIDDEN ms while the page is not shown (docs/interfaces.md). */
(function () {
  "use strict";
  var SOON = 150, EXPECTING = 10000, FAST = 700, SLOW = 5000, HIDDEN = 20000, ACTIVE = 120000;
  var root = document.getElementById("chat");
  if (!root || !window.fetch) { return; }
  var log = document.getElementById("chat-log");
  var form = document.getElementById("chat-form");
  var input = document.getElementById("chat-text");
  var button = form.querySelector("button");
  var statusLine = document.getElementById("chat-status");
  var url = root.getAttribute("data-messages-url");
  var storeName = root.getAttribute("data-store");
  var storage = pickStorage();
  var token = null, after = 0, shown = {}, lastActivity = 0, lastSent = 0, timer = null, busy = false, stopped = false;

  function pickStorage() {
    var names = ["localStorage", "sessionStorage"];
    for (var i = 0; i < names.length; i++) {
      try {
        var candidate = window[names[i]];
        candidate.setItem("flowgate-chat-probe", "1");
        candidate.removeItem("flowgate-chat-probe");
        return candidate;
      } catch (error) { /* blocked in this frame (third-party storage off): try the next */ }
    }
    return null;
  }
  var framed = window.parent !== window, parentOrigin = null;
  var frameOrigins = (root.getAttribute("data-frame-origins") || "").split(" ").filter(Boolean);

  // Whether origin (scheme://host[:port], as event.origin reads) is a site the widget's owner allows to show it:
  // the page's frame-ancestors, checked here again for a browser or a proxy that does not apply that header.
  // "*" is any web page; "https://*.example.org" any subdomain of example.org; http:// also allows https://.
  function allowedParent(origin) {
    var parts = /^(https?):\/\/([^/]+)$/.exec(origin || "");
    if (!parts) { return false; }  // "null" (sandboxed or file: parents), data:, blob:
    return frameOrigins.some(function (pattern) {
      if (pattern === "*") { return true; }
      var allowed = /^(https?):\/\/(\*\.)?([^/]+)$/.exec(pattern);
      if (!allowed || (allowed[1] !== parts[1] && !(allowed[1] === "http" && parts[1] === "https"))) { return false; }
      if (!allowed[2]) { return parts[2] === allowed[3]; }
      var suffix = "." + allowed[3];
      return parts[2].length > suffix.length && parts[2].slice(-suffix.length) === suffix;
    });
  }
  // The parent page's origin where the browser tells it (Chromium, Safari); null where it does not (Firefox) or
  // hides it ("null" under the frame's no-referrer policy): then only the origin of the answer tells.
  function knownParentOrigin() {
    var ancestors = window.location.ancestorOrigins;
    return ancestors && ancestors.length && ancestors[0] !== "null" ? ancestors[0] : null;
  }

  function saved() {
    if (storage) {
      try { return Promise.resolve(storage.getItem(storeName)); } catch (error) { return Promise.resolve(null); }
    }
    var known = framed ? knownParentOrigin() : null;
    if (!framed || (known !== null && !allowedParent(known))) { return Promise.resolve(null); }
    // Ask embed.js on the site's page for the token it keeps; without an answer soon, start a new conversation.
    // The question carries nothing; the answer counts only from the parent window, on a site the widget allows.
    return new Promise(function (resolve) {
      var timer = window.setTimeout(function () { finish(null); }, 1000);
      function finish(value) {
        window.clearTimeout(timer);
        window.removeEventListener("message", answered);
        resolve(value);
      }
      function answered(event) {
        if (event.source !== window.parent || !event.data || event.data.type !== "flowgate-chat:token") { return; }
        if (!allowedParent(event.origin) || (known !== null && event.origin !== known)) { return; }
        parentOrigin = event.origin;
        finish(typeof event.data.token === "string" ? event.data.token : null);
      }
      window.addEventListener("message", answered);
      window.parent.postMessage({ type: "flowgate-chat:token?" }, known || "*");
    });
  }
  function save(value) {
    if (storage) {
      try { storage.setItem(storeName, value); } catch (error) { /* memory only */ }
    } else if (parentOrigin) {  // only to the allowed page that answered, never to whatever frames it next
      window.parent.postMessage({ type: "flowgate-chat:keep", token: value }, parentOrigin);
    }
  }

  function call(method, path, body) {
    var headers = { "X-Chat-Token": token, "Accept": "application/json" };
    if (body) { headers["Content-Type"] = "application/json"; }
    return fetch(path, {
      method: method, headers: headers, body: body ? JSON.stringify(body) : undefined,
      credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer"
    });
  }

  function say(text) { statusLine.textContent = text || ""; }

  function show(message) {
    if (shown[message.id]) { return; }
    shown[message.id] = true;
    after = Math.max(after, message.id);
    var item = document.createElement("p");
    item.className = "chat__message chat__message--" + (message.role === "visitor" ? "visitor" : "bot");
    var who = document.createElement("span");
    who.className = "visually-hidden";
    who.textContent = root.getAttribute(message.role === "visitor" ? "data-you" : "data-them") + ": ";
    item.appendChild(who);
    // Bidirectional controls in a message would show it reordered: replaced, as the pages do (interfaces/typed_text.py).
    item.setAttribute("dir", "auto");
    item.appendChild(document.createTextNode(message.text.replace(/[\u202a-\u202e\u2066-\u2069]/g, "\ufffd")));
    log.appendChild(item);
    log.scrollTop = log.scrollHeight;
  }

  function poll() {
    return call("GET", url + "?after=" + after).then(function (response) {
      if (response.status === 403 || response.status === 404) { return response.status; }
      if (!response.ok) { return response.status; }
      return response.json().then(function (body) {
        if (body.messages.length) { lastActivity = Date.now(); }
        // A reply came: later ones (a run may send several) still show within FAST ms.
        if (body.messages.some(function (m) { return m.role !== "visitor"; })) { lastSent = 0; }
        body.messages.forEach(show);
        return body.messages.length >= 100 ? poll() : 200;
      });
    }, function () { return 0; });
  }

  function schedule(wait) {
    if (stopped) { return; }
    window.clearTimeout(timer);
    if (wait === undefined) {
      var now = Date.now();
      wait = document.hidden ? HIDDEN : now - lastSent < EXPECTING ? SOON : now - lastActivity < ACTIVE ? FAST : SLOW;
    }
    timer = window.setTimeout(function () { poll().then(function (code) { afterPoll(code); }); }, wait);
  }

  function afterPoll(code) {
    if (code === 404) { stopped = true; say(root.getAttribute("data-error-gone")); return; }
    schedule();
  }

  function send(event) {
    event.preventDefault();
    var text = input.value.trim();
    if (!text || busy || !token) { return; }
    busy = true;
    button.disabled = true;
    say("");
    call("POST", url, { text: text }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (response.status === 201) {
          input.value = "";
          lastActivity = lastSent = Date.now();
          show(body.message);
          schedule(SOON);
        } else if (response.status === 429) {
          say(root.getAttribute("data-error-limit"));
        } else if (response.status === 503 || response.status === 404) {
          say(root.getAttribute("data-error-gone"));
        } else {
          say(body.error ? root.getAttribute("data-error-send") + " (" + body.error + ")" : root.getAttribute("data-error-send"));
        }
      });
    }, function () {
      say(root.getAttribute("data-error-send"));
    }).then(function () {
      busy = false;
      button.disabled = false;
      input.focus();
    });
  }

  form.addEventListener("submit", send);
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { send(event); }
    if (event.key === "Escape" && window.parent !== window) {
      window.parent.postMessage({ type: "flowgate-chat:close" }, "*");
    }
  });
  document.addEventListener("visibilitychange", function () { if (!document.hidden) { schedule(0); } });
  window.addEventListener("message", function (event) {
    if (event.data && event.data.type === "flowgate-chat:focus") { input.focus(); }
  });

  // The stored token first (a reload keeps the conversation); if it is refused (expired, or the widget's
  // URL was renewed), the new conversation this page load was issued.
  saved().then(function (stored) {
    token = stored || root.getAttribute("data-token");
    return poll().then(function (code) {
      if (code === 403 && stored) {
        token = root.getAttribute("data-token");
        after = 0;
        save(token);
        return poll();
      }
      if (!stored) { save(token); }
      return code;
    });
  }).then(afterPoll);
  if (document.hasFocus()) { input.focus(); }
}());
