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
  // again from the server and swapped in whole (the server escaped it).
  var inbox = document.getElementById("inbox");
  if (inbox && inbox.dataset.live === "1" && window.EventSource) {
    var busy = false, again = false;
    var refresh = function () {
      if (busy) { again = true; return; }
      busy = true;
      fetch(location.href, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("inbox");
        if (fresh) { inbox.replaceChildren.apply(inbox, Array.from(fresh.childNodes)); }
      }).finally(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
    };
    var es = new EventSource(inbox.dataset.events);
    es.addEventListener("entry", function (ev) {
      var t = JSON.parse(ev.data).type || "";
      if (t.indexOf("approval.") === 0) {
        refresh();
        setTimeout(refresh, 400); // the engine lists it as it records it
      }
    });
    es.addEventListener("broken", function () { es.close(); inbox.dataset.live = "broken"; });
  }
});
