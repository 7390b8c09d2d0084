/* Sortable and filterable tables for the HTML reports (no dependencies).
 *
 * Sorting: <table class="nm-table" data-sortable>, header cells <th data-sort="text|num">; a cell's sort key is its
 * data-value attribute, else its text. Empty keys sort last. Clicking toggles ascending/descending.
 *
 * Filtering: <div class="nm-filters" data-table="TABLE_ID"> holding controls with data-filter="NAME":
 *   NAME "q"  -> the row's data-search must contain the typed text (case-insensitive);
 *   otherwise -> the row's data-NAME (space-separated tokens) must contain the selected value ("" = any).
 * A [data-count] element inside the bar shows "N of M". Elements with data-follows="TABLE_ID" and a data-key
 * are hidden together with the table row of the same data-key (e.g. detail panels below the table).
 *
 * Anchors: navigating to #id of a <details> element opens it.
 */
(function () {
  "use strict";

  function key(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var value = cell.getAttribute("data-value");
    return value === null ? cell.textContent.trim() : value;
  }

  function sortBy(table, th) {
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    var numeric = th.getAttribute("data-sort") === "num";
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th[data-sort]").forEach(function (other) { other.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a, index), y = key(b, index);
      if (x === "" || y === "") return x === y ? 0 : (x === "" ? 1 : -1);
      var order = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function applyFilters(bar) {
    var table = document.getElementById(bar.getAttribute("data-table"));
    if (!table) return;
    var controls = bar.querySelectorAll("[data-filter]");
    var rows = table.tBodies[0].rows, shown = 0, hidden = {};
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i], visible = true;
      controls.forEach(function (control) {
        var name = control.getAttribute("data-filter"), wanted = control.value.trim().toLowerCase();
        if (!wanted) return;
        if (name === "q") {
          visible = visible && (row.getAttribute("data-search") || "").toLowerCase().indexOf(wanted) !== -1;
        } else {
          var tokens = (row.getAttribute("data-" + name) || "").toLowerCase().split(/\s+/);
          visible = visible && tokens.indexOf(wanted) !== -1;
        }
      });
      row.hidden = !visible;
      if (visible) shown++; else hidden[row.getAttribute("data-key")] = true;
    }
    var count = bar.querySelector("[data-count]");
    if (count) count.textContent = shown + " of " + rows.length + " shown";
    var empty = table.parentNode.querySelector(".nm-empty");
    if (empty) empty.hidden = shown !== 0;
    document.querySelectorAll('[data-follows="' + table.id + '"]').forEach(function (el) {
      el.hidden = !!hidden[el.getAttribute("data-key")];
    });
  }

  function openTarget() {
    if (!location.hash) return;
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target && target.tagName === "DETAILS") target.open = true;
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("table[data-sortable]").forEach(function (table) {
      table.querySelectorAll("th[data-sort]").forEach(function (th) {
        th.tabIndex = 0;
        th.addEventListener("click", function () { sortBy(table, th); });
        th.addEventListener("keydown", function (event) { if (event.key === "Enter") sortBy(table, th); });
      });
    });
    document.querySelectorAll(".nm-filters[data-table]").forEach(function (bar) {
      bar.querySelectorAll("[data-filter]").forEach(function (control) {
        control.addEventListener("input", function () { applyFilters(bar); });
        control.addEventListener("change", function () { applyFilters(bar); });
      });
      applyFilters(bar);
    });
    window.addEventListener("hashchange", openTarget);
    openTarget();
  });
})();
