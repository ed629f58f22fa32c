// Runs web/static/analytics.js in a minimal browser stand-in and prints what it sends (JSON).
// argv: <script path> <scenario: "normal" | "dnt" | "nostorage"> [<localStorage as JSON>]
// Prints {sent, localStorage, sessionStorage}: a run is one page in a new browser session
// (empty sessionStorage); pass a previous run's localStorage to continue the same browser.
const fs = require("fs");
const vm = require("vm");
const [scriptPath, scenario, savedLocal] = process.argv.slice(2);
const sent = [];
const listeners = {};
let now = 1_000_000;
function storage(data) {
  if (scenario === "nostorage") {
    const blocked = () => { throw new Error("blocked"); };
    return { getItem: blocked, setItem: blocked, removeItem: blocked, data };
  }
  return {
    getItem: (k) => (k in data ? data[k] : null),
    setItem: (k, v) => { data[k] = String(v); },
    removeItem: (k) => { delete data[k]; },
    data,
  };
}
const document = {
  currentScript: { src: "https://news.example.test/newsletter/analytics.js?v=1" },
  referrer: "https://search.example/results?q=jane%40example.com#x",
  visibilityState: "visible",
  addEventListener: (type, fn) => { (listeners["doc:" + type] ||= []).push(fn); },
};
const window = {
  crypto: require("crypto").webcrypto,
  localStorage: storage(JSON.parse(savedLocal || "{}")),
  sessionStorage: storage({}),
  addEventListener: (type, fn) => { (listeners["win:" + type] ||= []).push(fn); },
};
const navigator = {
  doNotTrack: scenario === "dnt" ? "1" : null,
  sendBeacon: (url, data) => { sent.push({ url, body: JSON.parse(data) }); return true; },
};
const context = { window, document, navigator, location: { pathname: "/news/today" },
  Date: { now: () => now }, Uint8Array, JSON, Math, Array };
vm.createContext(context);
vm.runInContext(fs.readFileSync(scriptPath, "utf8"), context);
const link = { tagName: "A", href: "https://elsewhere.example/page?token=abc#frag", parentElement: null };
const span = { tagName: "SPAN", parentElement: link };
(listeners["doc:click"] || []).forEach((fn) => fn({ target: span }));
now += 12_400;
document.visibilityState = "hidden";
(listeners["doc:visibilitychange"] || []).forEach((fn) => fn());
(listeners["win:pagehide"] || []).forEach((fn) => fn());  // already flushed: sends nothing
process.stdout.write(JSON.stringify({
  sent, localStorage: window.localStorage.data, sessionStorage: window.sessionStorage.data,
}));
