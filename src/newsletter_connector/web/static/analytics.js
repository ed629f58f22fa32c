/* newsletter-connector analytics capture: pageviews, link clicks and engagement pings.
 * Include once per page:  <script defer src="{base_url}/analytics.js"></script>
 * No cookies: a random visitor id lives in localStorage (setting analytics_visitor_id =
 * "persistent") or in sessionStorage ("session": a new id per tab session), a random session
 * id in sessionStorage (one per tab until it closes). Nothing is sent when the browser signals
 * Do Not Track or Global Privacy Control. Query strings never leave the page. */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src) return;
  if (navigator.doNotTrack === "1" || navigator.globalPrivacyControl === true) return;
  var endpoint = script.src.replace(/analytics\.js(\?.*)?$/, "analytics/collect");

  function randomId() {
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) {
      return ("0" + b.toString(16)).slice(-2);
    }).join("");
  }

  function storedId(storageName, key) {
    try {
      var storage = window[storageName];
      var value = storage.getItem(key);
      if (!/^[A-Za-z0-9_-]{8,64}$/.test(value || "")) {
        value = randomId();
        storage.setItem(key, value);
      }
      return value;
    } catch (e) {
      return randomId(); // storage blocked: ids last for this page only
    }
  }

  // The app writes its analytics_visitor_id setting here as it serves the script.
  var VISITOR_STORAGE = "localStorage";
  if (VISITOR_STORAGE !== "localStorage") {
    // Session ids only: forget a persistent id kept while the setting was "persistent".
    try { window.localStorage.removeItem("nc_visitor_id"); } catch (e) { /* storage blocked */ }
  }
  var visitorId = storedId(VISITOR_STORAGE, "nc_visitor_id");
  var sessionId = storedId("sessionStorage", "nc_session_id");

  function send(body) {
    body.visitor_id = visitorId;
    body.session_id = sessionId;
    body.path = location.pathname;
    var data = JSON.stringify(body); // sent as text/plain: a simple request, no preflight
    if (navigator.sendBeacon && navigator.sendBeacon(endpoint, data)) return;
    try {
      fetch(endpoint, {
        method: "POST", body: data, keepalive: true, mode: "no-cors",
        headers: { "Content-Type": "text/plain" }
      });
    } catch (e) { /* analytics never breaks the page */ }
  }

  send({ type: "pageview", referrer: document.referrer.split(/[?#]/)[0] });

  document.addEventListener("click", function (event) {
    var el = event.target;
    while (el && el.tagName !== "A") el = el.parentElement;
    if (el && el.href) send({ type: "link click", href: el.href.split(/[?#]/)[0] });
  }, true);

  var visibleSince = document.visibilityState === "visible" ? Date.now() : null;
  function flush() {
    if (visibleSince === null) return;
    var seconds = Math.round((Date.now() - visibleSince) / 1000);
    visibleSince = null;
    if (seconds >= 1) send({ type: "engagement ping", seconds: Math.min(seconds, 86400) });
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") flush();
    else visibleSince = Date.now();
  });
  window.addEventListener("pagehide", flush);
})();
