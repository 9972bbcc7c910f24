// paykit sandbox: the little JavaScript the pages use. Everything works
// without it; it only adds copy buttons and the dashboard's auto-refresh.
(function () {
  "use strict";

  // Copy buttons are in the page but hidden: without JavaScript they could
  // not work, so they appear only when this script runs.
  var live = document.getElementById("copy-status");
  function say(msg) { if (live) { live.textContent = msg; } }
  function fallbackCopy(text) {
    var ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.style.position = "absolute";
    ta.style.left = "-9999px";
    document.body.appendChild(ta);
    ta.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(ta);
    return ok;
  }
  document.querySelectorAll("button[data-copy]").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () {
      var text = b.getAttribute("data-copy");
      var what = b.getAttribute("data-what") || "Value";
      var done = function () { say(what + " copied"); };
      var fail = function () { say(fallbackCopy(text) ? what + " copied" : "Copy failed: select the text and copy it"); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, fail);
      } else {
        fail();
      }
    });
  });

  // Auto-refresh of the dashboard, every data-refresh seconds (0: off). It
  // waits while the tester is typing into a field, so a half-written tx
  // hash or fault path is never thrown away.
  var secs = parseInt(document.body.getAttribute("data-refresh") || "0", 10);
  if (!(secs > 0)) { return; }
  function busy() {
    var a = document.activeElement;
    return a && (a.tagName === "INPUT" || a.tagName === "SELECT" || a.tagName === "TEXTAREA");
  }
  function tick() {
    if (busy() || document.hidden) { setTimeout(tick, secs * 1000); return; }
    window.location.reload();
  }
  setTimeout(tick, secs * 1000);
})();
