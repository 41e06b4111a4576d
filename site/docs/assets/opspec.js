// The op index's filters: a select per column named in FILTERS, built from the values the table holds.
(function () {
  var FILTERS = ["Category", "Status", "Worst result"];
  // A cell's value is its first name (a status before the backends that gave it), else its text.
  function value(cell) { return (cell.querySelector(".opspec-id") || cell).textContent.trim(); }
  function setup() {
    document.querySelectorAll(".opspec-filter").forEach(function (box) {
      if (box.dataset.ready) return;
      var table = box.parentElement.querySelector("table");
      for (var el = box.nextElementSibling; el && !table; el = el.nextElementSibling) table = el.querySelector("table");
      if (!table) return;
      box.dataset.ready = "1";
      var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) { return th.textContent.trim(); });
      var rows = Array.prototype.slice.call(table.querySelectorAll("tbody tr"));
      var selects = [];
      FILTERS.forEach(function (name) {
        var column = heads.indexOf(name);
        if (column < 0) return;
        var values = {};
        rows.forEach(function (row) { values[value(row.cells[column])] = true; });
        var label = document.createElement("label");
        label.textContent = name + " ";
        var select = document.createElement("select");
        select.dataset.column = column;
        select.setAttribute("aria-label", name);
        ["all"].concat(Object.keys(values).sort()).forEach(function (value) {
          var option = document.createElement("option");
          option.value = option.textContent = value;
          select.appendChild(option);
        });
        select.addEventListener("change", apply);
        label.appendChild(select);
        box.appendChild(label);
        selects.push(select);
      });
      var count = document.createElement("span");
      box.appendChild(count);
      function apply() {
        var shown = 0;
        rows.forEach(function (row) {
          var ok = selects.every(function (s) { return s.value === "all" || value(row.cells[s.dataset.column]) === s.value; });
          row.style.display = ok ? "" : "none";
          if (ok) shown += 1;
        });
        count.textContent = shown + " of " + rows.length + " ops";
      }
      apply();
    });
  }
  if (window.document$ && window.document$.subscribe) window.document$.subscribe(setup);
  else document.addEventListener("DOMContentLoaded", setup);
})();
