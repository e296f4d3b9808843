(function () {
  var tables = document.querySelectorAll("table.sortable");
  tables.forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.tabIndex = 0;
      function sort() {
        var numeric = table.tBodies[0].rows.length > 0 && table.tBodies[0].rows[0].cells[col].hasAttribute("data-v");
        var was = th.getAttribute("aria-sort");
        var desc = was ? was === "ascending" : numeric;
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", desc ? "descending" : "ascending");
        var rows = Array.prototype.slice.call(table.tBodies[0].rows);
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col], c;
          if (numeric) {
            c = parseFloat(x.getAttribute("data-v")) - parseFloat(y.getAttribute("data-v"));
          } else {
            c = x.textContent.localeCompare(y.textContent);
          }
          return desc ? -c : c;
        });
        rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
    });
  });
  document.querySelectorAll(".canvas").forEach(function (canvas) {
    function toStart() {
      var nodes = canvas.querySelectorAll("g.node");
      for (var i = 0; i < nodes.length; i++) {
        var a = nodes[i].querySelector("a"), t = nodes[i].querySelector("title");
        var name = (a && a.getAttribute("xlink:title")) || (t && t.textContent);
        if (name === "__start__") {
          var r = nodes[i].getBoundingClientRect(), c = canvas.getBoundingClientRect();
          canvas.scrollLeft += r.left - c.left - 24;
          canvas.scrollTop += r.top - c.top - canvas.clientHeight / 2;
          return;
        }
      }
    }
    toStart();
    canvas.parentNode.querySelectorAll("input").forEach(function (input) {
      input.addEventListener("change", toStart);
    });
  });
  document.documentElement.setAttribute("data-sortable", String(tables.length));
})();
