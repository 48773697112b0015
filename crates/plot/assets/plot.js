// volley plot page script (volley's own, MIT). Reads the JSON embedded by
// crates/plot/src/html.rs and draws four uPlot charts. Sets
// window.volleyPlot = { series, points, latencySeries, ready, exportPng }.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("volley-data").textContent);
  var OK_COLORS = ["#1f77b4", "#2ca02c", "#9467bd", "#17becf", "#8c564b", "#bcbd22", "#e377c2", "#7f7f7f"];
  var ERR_COLORS = ["#d62728", "#ff7f0e", "#c2185b", "#a0522d", "#e6550d", "#b8860b", "#ad1457", "#5d4037"];
  var DASHES = [[], [6, 3], [2, 2], [10, 3, 2, 3]];

  function okColor(i) { return OK_COLORS[i % OK_COLORS.length]; }
  function errColor(i) { return ERR_COLORS[i % ERR_COLORS.length]; }
  function alpha(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + a + ")";
  }
  function codeColor(code) {
    if (code === "0") return "#555555";
    if (code === "other") return "#999999";
    var c = code.charAt(0);
    return c === "2" ? "#2e7d32" : c === "3" ? "#1565c0" : c === "4" ? "#ef6c00" : "#c62828";
  }
  function fmtMs(v) {
    if (v == null) return "–";
    if (v >= 1000) return (v / 1000).toFixed(3) + " s";
    if (v >= 1) return v.toFixed(3) + " ms";
    return (v * 1000).toFixed(0) + " µs";
  }
  function fmtRate(v) { return v == null ? "–" : v.toFixed(1) + "/s"; }
  function fmtSecs(v) { return v == null ? "–" : v.toFixed(3) + " s"; }
  function pctLabel(x) {
    if (x == null) return "–";
    var q = 100 * (1 - 1 / x);
    var digits = x < 100 ? 0 : Math.min(6, Math.ceil(Math.log10(x)) - 2);
    return q.toFixed(digits) + "%";
  }
  function width(el) { return Math.max(300, el.clientWidth || 800); }

  // Summary table and warnings.
  var summary = document.getElementById("summary");
  var tbl = "<table><tr><th>series</th><th>requests</th><th>ok</th><th>errors</th><th>max</th></tr>";
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  data.series.forEach(function (s) {
    tbl += "<tr><td>" + esc(s.name) + "</td><td>" + s.records + "</td><td>" + s.ok + "</td><td>" +
      s.errors + "</td><td>" + esc(fmtMs(s.max_ms)) + "</td></tr>";
  });
  summary.innerHTML = tbl + "</table>";
  var warnings = document.getElementById("warnings");
  (data.warnings || []).forEach(function (w) {
    var li = document.createElement("li");
    li.textContent = w;
    warnings.appendChild(li);
  });

  var charts = [];
  var syncing = false;
  function syncX(u, key) {
    if (key !== "x" || syncing) return;
    syncing = true;
    timeCharts.forEach(function (o) {
      if (o !== u && o.scales.x.min !== u.scales.x.min) {
        o.setScale("x", { min: u.scales.x.min, max: u.scales.x.max });
      }
    });
    syncing = false;
  }
  var timeCharts = [];

  function pointsSeries(label, color, size) {
    return {
      label: label,
      stroke: color,
      fill: color,
      width: 0,
      paths: function () { return null; },
      points: { show: true, space: 0, size: size, width: 0, stroke: color, fill: color },
      value: function (u, v) { return fmtMs(v); },
    };
  }

  // 1. Latency over time: per series OK max (points), OK min (small
  // points), errors max (points).
  var latTables = [];
  var latSeries = [{ label: "time", value: function (u, v) { return fmtSecs(v); } }];
  var latLabels = [];
  data.series.forEach(function (s, i) {
    latTables.push([s.t, s.ok_max, s.ok_min, s.err_max]);
    latSeries.push(pointsSeries(s.name + " OK max", okColor(i), 5));
    latSeries.push(pointsSeries(s.name + " OK min", alpha(okColor(i), 0.45), 3));
    latSeries.push(pointsSeries(s.name + " errors", errColor(i), 5));
    latLabels.push(s.name + " OK max", s.name + " OK min", s.name + " errors");
  });
  var latData = uPlot.join(latTables);
  var latEl = document.getElementById("latency");
  var latency = new uPlot({
    width: width(latEl),
    height: 420,
    scales: { x: { time: false } },
    axes: [
      { label: "seconds since start" },
      { label: "latency (ms)", size: 70 },
    ],
    series: latSeries,
    cursor: { drag: { x: true, y: true, uni: 40 }, sync: { key: "volley-time" } },
    hooks: { setScale: [syncX] },
  }, latData, latEl);
  charts.push(latency);
  timeCharts.push(latency);

  // 2. Throughput and status codes per second, by completion time.
  var rateTables = [];
  var rateSeries = [{ label: "time", value: function (u, v) { return fmtSecs(v); } }];
  data.series.forEach(function (s, i) {
    var w = s.rw > 0 ? s.rw : 1;
    var cols = [s.rt, s.rc.map(function (c) { return c / w; })];
    rateSeries.push({
      label: s.name + " responses",
      stroke: okColor(i),
      width: 2,
      dash: DASHES[i % DASHES.length],
      value: function (u, v) { return fmtRate(v); },
    });
    Object.keys(s.codes).forEach(function (code) {
      cols.push(s.codes[code].map(function (c) { return c / w; }));
      rateSeries.push({
        label: s.name + " " + (code === "0" ? "no response" : code),
        stroke: codeColor(code),
        width: 1,
        dash: DASHES[i % DASHES.length],
        value: function (u, v) { return fmtRate(v); },
      });
    });
    rateTables.push(cols);
  });
  var rateEl = document.getElementById("rate");
  var rate = new uPlot({
    width: width(rateEl),
    height: 260,
    scales: { x: { time: false } },
    axes: [
      { label: "seconds since start" },
      { label: "per second", size: 70 },
    ],
    series: rateSeries,
    cursor: { drag: { x: true, y: false }, sync: { key: "volley-time" } },
    hooks: { setScale: [syncX] },
  }, uPlot.join(rateTables), rateEl);
  charts.push(rate);
  timeCharts.push(rate);

  // 3. Percentiles (HDR): x = 1/(1-q) on a log scale.
  var pctSeries = [{ label: "percentile", value: function (u, v) { return pctLabel(v); } }];
  var pctData = [data.pct_x];
  data.series.forEach(function (s, i) {
    pctData.push(s.pct.map(function (v) { return v == null ? null : Math.max(v, 0.001); }));
    pctSeries.push({
      label: s.name,
      stroke: okColor(i),
      width: 2,
      dash: DASHES[i % DASHES.length],
      value: function (u, v) { return fmtMs(v); },
    });
  });
  var pctEl = document.getElementById("pct");
  var pct = new uPlot({
    width: width(pctEl),
    height: 320,
    scales: { x: { time: false, distr: 3, log: 10 }, y: { distr: 3, log: 10 } },
    axes: [
      {
        label: "percentile",
        values: function (u, splits) {
          // Label the decades only: 0%, 90%, 99%, 99.9%, …
          return splits.map(function (x) {
            if (x == null || Math.abs(Math.log10(x) - Math.round(Math.log10(x))) > 1e-6) return "";
            return pctLabel(x);
          });
        },
      },
      { label: "latency (ms)", size: 70 },
    ],
    series: pctSeries,
  }, pctData, pctEl);
  charts.push(pct);

  // 4. Distribution: percent of requests per log-spaced latency bin.
  var hx = data.hist_x;
  var histSeries = [{ label: "latency", value: function (u, v) { return fmtMs(v); } }];
  var histData = [hx];
  data.series.forEach(function (s, i) {
    histData.push(s.hist.concat([0]).slice(0, hx.length));
    histSeries.push({
      label: s.name,
      stroke: okColor(i),
      fill: alpha(okColor(i), 0.15),
      width: 1.5,
      paths: uPlot.paths.stepped({ align: 1 }),
      value: function (u, v) { return v == null ? "–" : v.toFixed(3) + "%"; },
    });
  });
  var histEl = document.getElementById("hist");
  var hist = new uPlot({
    width: width(histEl),
    height: 320,
    scales: { x: { time: false, distr: 3, log: 10 } },
    axes: [
      { label: "latency (ms)" },
      { label: "% of requests", size: 60 },
    ],
    series: histSeries,
  }, histData, histEl);
  charts.push(hist);

  // Zoom reset: back to the full range on every chart.
  function reset() {
    charts.forEach(function (u) { u.setData(u.data, true); });
  }
  document.getElementById("reset").addEventListener("click", reset);

  // Export: all charts stacked on one canvas with a title and legends.
  function exportPng() {
    var dpr = window.devicePixelRatio || 1;
    var pad = 12 * dpr, lineH = 18 * dpr, titleH = 36 * dpr;
    var canvases = charts.map(function (u) { return u.ctx.canvas; });
    var w = Math.max.apply(null, canvases.map(function (c) { return c.width; }));
    var legendRows = charts.map(function (u) { return Math.ceil((u.series.length - 1) / 4); });
    var h = titleH;
    canvases.forEach(function (c, i) { h += c.height + legendRows[i] * lineH + pad; });
    var out = document.createElement("canvas");
    out.width = w;
    out.height = h;
    var ctx = out.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, w, h);
    ctx.fillStyle = "#222";
    ctx.font = (18 * dpr) + "px sans-serif";
    ctx.fillText(data.title, 10 * dpr, 24 * dpr);
    ctx.font = (12 * dpr) + "px sans-serif";
    var y = titleH;
    charts.forEach(function (u, ci) {
      ctx.drawImage(canvases[ci], 0, y);
      y += canvases[ci].height;
      var col = 0;
      for (var si = 1; si < u.series.length; si++) {
        var s = u.series[si];
        var x = 10 * dpr + col * (w / 4);
        ctx.fillStyle = typeof s._stroke === "string" ? s._stroke : "#444";
        ctx.fillRect(x, y + 5 * dpr, 10 * dpr, 10 * dpr);
        ctx.fillStyle = "#222";
        ctx.fillText(String(s.label), x + 14 * dpr, y + 14 * dpr);
        col++;
        if (col === 4 && si < u.series.length - 1) { col = 0; y += lineH; }
      }
      y += lineH + pad;
    });
    return out.toDataURL("image/png");
  }
  document.getElementById("export").addEventListener("click", function () {
    var a = document.createElement("a");
    a.download = (data.title || "volley-plot").replace(/[^A-Za-z0-9._-]+/g, "_") + ".png";
    a.href = exportPng();
    document.body.appendChild(a);
    a.click();
    a.remove();
  });

  window.addEventListener("resize", function () {
    [[latency, latEl], [rate, rateEl], [pct, pctEl], [hist, histEl]].forEach(function (p) {
      p[0].setSize({ width: width(p[1]), height: p[0].height });
    });
  });

  // For tests and scripts: series names and the points drawn per series.
  function nonNull(col) {
    var n = 0;
    for (var k = 0; k < col.length; k++) if (col[k] != null) n++;
    return n;
  }
  var latencySeries = {};
  latLabels.forEach(function (label, k) { latencySeries[label] = nonNull(latData[k + 1]); });
  var points = {};
  data.series.forEach(function (s) {
    points[s.name] = latencySeries[s.name + " OK max"] + latencySeries[s.name + " errors"];
  });
  window.volleyPlot = {
    series: data.series.map(function (s) { return s.name; }),
    points: points,
    latencySeries: latencySeries,
    charts: charts.length,
    exportPng: exportPng,
    reset: reset,
    ready: true,
  };
})();
