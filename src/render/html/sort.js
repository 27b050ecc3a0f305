// Click a column heading of a sortable table to sort its rows; click again to reverse.
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    var ascending = th.dataset.order !== "asc";
    th.dataset.order = ascending ? "asc" : "desc";
    var key = function (row) {
      var text = row.children[index] ? row.children[index].textContent.trim() : "";
      var number = parseFloat(text.replace(/[^0-9.eE+-]/g, ""));
      return isNaN(number) ? text.toLowerCase() : number;
    };
    Array.prototype.slice.call(body.rows)
      .sort(function (a, b) {
        var x = key(a), y = key(b);
        var order = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
        return ascending ? order : -order;
      })
      .forEach(function (row) { body.appendChild(row); });
  });
});
