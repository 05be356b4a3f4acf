// retention dashboard: refreshes the page's live block in place.
// Written for this project (no library); see docs/decisions.md.
// Every data-refresh milliseconds it fetches the same URL with ?fragment=1, which the
// server answers with the <main id="live"> contents alone, and swaps them in. Forms
// being edited live outside that block, so a refresh never eats what is being typed.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) { return; }
  var every = parseInt(document.body.getAttribute("data-refresh"), 10) || 5000;
  var stamp = document.getElementById("refreshed");
  var generation = 0;

  function fragmentURL() {
    var u = new URL(window.location.href);
    u.searchParams.set("fragment", "1");
    u.searchParams.delete("note");
    return u.toString();
  }

  function show(text, failed) {
    if (!stamp) { return; }
    stamp.textContent = text;
    stamp.className = failed ? "bad" : "";
  }

  function refresh() {
    if (document.hidden) { schedule(); return; }
    fetch(fragmentURL(), { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return r.text();
      })
      .then(function (html) {
        // A chart's folded values that the reader opened stay open across the swap.
        var open = {};
        live.querySelectorAll("details[id]").forEach(function (d) { open[d.id] = d.open; });
        live.innerHTML = html;
        live.querySelectorAll("details[id]").forEach(function (d) { if (open[d.id]) { d.open = true; } });
        generation += 1;
        live.setAttribute("data-generation", String(generation));
        show("updated " + new Date().toLocaleTimeString(), false);
      })
      .catch(function (e) { show("refresh failed: " + e.message, true); })
      .then(schedule);
  }

  function schedule() { window.setTimeout(refresh, every); }
  schedule();
})();
