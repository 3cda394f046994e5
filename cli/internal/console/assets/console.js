// opx console: the little the pages need beyond HTML. Everything works
// without it; nothing here reads or writes recorded content as HTML.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.documentElement.classList.add("js");
  var all = document.getElementById("expand-all");
  if (all) {
    all.addEventListener("click", function () {
      var open = all.dataset.open !== "1";
      document.querySelectorAll("details").forEach(function (d) { d.open = open; });
      all.dataset.open = open ? "1" : "0";
      all.textContent = open ? "collapse all" : "expand all";
    });
  }
  // Filters apply as they change.
  document.querySelectorAll("form.filter select, form.filter input[type=checkbox]").forEach(function (el) {
    el.addEventListener("change", function () { el.form.submit(); });
  });
  // The inbox follows the ledger (server-sent events from the checked
  // follow stream): when an approval is asked or answered, it is read
  // again from the server (which, for a request, answers once the engine
  // lists it) and merged in: an approval still waiting keeps its article,
  // with whatever reason is being typed into it; new ones come in as the
  // server escaped them, answered ones go.
  var inbox = document.getElementById("inbox");
  if (inbox && inbox.dataset.live === "1" && window.EventSource) {
    var busy = false, again = 0;
    var merge = function (fresh) {
      var keep = {};
      inbox.querySelectorAll("article.pending").forEach(function (a) { keep[a.id] = a; });
      var nodes = Array.from(fresh.childNodes).map(function (n) {
        var old = n.nodeType === 1 && n.matches("article.pending") && keep[n.id];
        return old || n;
      });
      inbox.replaceChildren.apply(inbox, nodes);
    };
    var refresh = function (seen) {
      if (busy) { again = Math.max(again, seen || 1); return; }
      busy = true;
      var u = new URL(location.href);
      if (seen) { u.searchParams.set("seen", String(seen)); }
      fetch(u, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("inbox");
        if (fresh) { merge(fresh); }
      }).finally(function () {
        busy = false;
        if (again) { var s = again; again = 0; refresh(s > 1 ? s : 0); }
      });
    };
    var es = new EventSource(inbox.dataset.events);
    es.addEventListener("entry", function (ev) {
      var d = JSON.parse(ev.data), t = d.type || "";
      if (t === "approval.requested") { refresh(d.seq); } else if (t.indexOf("approval.") === 0) { refresh(0); }
    });
    es.addEventListener("broken", function () { es.close(); inbox.dataset.live = "broken"; });
  }
});
