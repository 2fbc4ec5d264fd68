{% load i18n %}{% if available %}{% translate "Chat" as open_label %}{% else %}{% translate "Chat unavailable" as open_label %}{% endif %}{% translate "Close chat" as close_label %}{% comment %}The chat widget: one script tag adds a launcher button and the widget's frame to this page.
   Everything is styled with !important inside a shadow root, so the page's CSS cannot reach it; the frame is on
   the service's own origin (or the account's white-label domain), so it never sees this page's cookies or storage.
   A template comment, not a script one: a white-label domain's script names no service.{% endcomment %}
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src || !window.URL) { return; }
  var src = new URL(script.src, document.baseURI);
  var key = src.searchParams.get("key");
  var mark = "flowgateChat:" + key;
  if (!key || window[mark]) { return; }
  window[mark] = true;
  var origin = src.origin;
  var frameUrl = origin + src.pathname.replace(/embed\.js$/, "") + encodeURIComponent(key);
  var title = "{{ title|escapejs }}" || "{{ open_label|escapejs }}";
  // A paused chat: its button says so, in grey; opened, its frame says when to come back.
  var available = {% if available %}true{% else %}false{% endif %};
  var openLabel = "{{ open_label|escapejs }}", closeLabel = "{{ close_label|escapejs }}";

  function force(element, styles) {
    for (var name in styles) {
      if (Object.prototype.hasOwnProperty.call(styles, name)) { element.style.setProperty(name, styles[name], "important"); }
    }
  }

  var host = document.createElement("div");
  host.setAttribute("data-flowgate-chat", "");
  force(host, {
    "all": "initial", "position": "fixed", "right": "16px", "bottom": "16px", "left": "auto", "top": "auto",
    "z-index": "2147483647", "display": "flex", "flex-direction": "column", "align-items": "flex-end",
    "gap": "12px", "margin": "0", "padding": "0", "border": "0", "width": "auto", "height": "auto",
    "max-width": "calc(100vw - 32px)", "transform": "none", "opacity": "1", "visibility": "visible"
  });
  var root = host.attachShadow ? host.attachShadow({ mode: "open" }) : host;

  var frame = document.createElement("iframe");
  frame.title = title;
  frame.setAttribute("referrerpolicy", "strict-origin");
  frame.setAttribute("allow", "");
  force(frame, {
    "all": "initial", "display": "none", "box-sizing": "border-box", "width": "380px",
    "height": "560px", "max-width": "calc(100vw - 32px)", "max-height": "calc(100vh - 96px)",
    "border": "1px solid #c9ced6", "border-radius": "12px", "background": "#fff", "margin": "0", "padding": "0",
    "box-shadow": "0 8px 32px rgba(0, 0, 0, 0.25)", "color-scheme": "light", "visibility": "visible", "opacity": "1"
  });

  var button = document.createElement("button");
  button.type = "button";
  button.textContent = openLabel;
  button.setAttribute("aria-expanded", "false");
  button.setAttribute("aria-haspopup", "dialog");
  force(button, {
    "all": "initial", "display": "inline-block", "box-sizing": "border-box", "cursor": "pointer",
    "font": "600 16px/1.2 system-ui, sans-serif", "color": "#fff", "background": available ? "#1a56b0" : "#5c6370",
    "border": "2px solid #fff", "border-radius": "999px", "padding": "12px 20px", "margin": "0",
    "box-shadow": "0 4px 16px rgba(0, 0, 0, 0.3)", "outline-offset": "2px", "visibility": "visible", "opacity": "1"
  });
  button.addEventListener("focus", function () { force(button, { "outline": "3px solid #1d2330" }); });
  button.addEventListener("blur", function () { force(button, { "outline": "none" }); });

  // Where the conversation token is kept when the browser refuses storage to the frame (third-party storage
  // blocked): this site's own localStorage, handed to the frame when it asks.
  var storeName = "flowgate-chat:" + key;
  function kept() { try { return window.localStorage.getItem(storeName); } catch (error) { return null; } }
  function keep(token) { try { window.localStorage.setItem(storeName, token); } catch (error) { /* memory only */ } }

  var open = false, loaded = false;
  function focusFrame() {
    frame.focus();
    if (loaded) { frame.contentWindow.postMessage({ type: "flowgate-chat:focus" }, origin); }
  }
  function toggle(wanted) {
    open = wanted;
    if (open && !frame.getAttribute("src")) {
      frame.addEventListener("load", function () { loaded = true; if (open) { focusFrame(); } });
      frame.setAttribute("src", frameUrl);
    }
    force(frame, { "display": open ? "block" : "none" });
    button.textContent = open ? closeLabel : openLabel;
    button.setAttribute("aria-expanded", open ? "true" : "false");
    if (open) { focusFrame(); } else { button.focus(); }
  }
  button.addEventListener("click", function () { toggle(!open); });
  window.addEventListener("message", function (event) {
    if (event.origin !== origin || event.source !== frame.contentWindow || !event.data) { return; }
    var type = event.data.type;
    if (type === "flowgate-chat:close" && open) { toggle(false); }
    if (type === "flowgate-chat:token?") {
      frame.contentWindow.postMessage({ type: "flowgate-chat:token", token: kept() }, origin);
    }
    if (type === "flowgate-chat:keep" && typeof event.data.token === "string" && event.data.token.length < 500) {
      keep(event.data.token);
    }
  });

  root.appendChild(frame);
  root.appendChild(button);
  function attach() { document.body.appendChild(host); }
  if (document.body) { attach(); } else { document.addEventListener("DOMContentLoaded", attach); }
}());
