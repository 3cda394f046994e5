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
});
