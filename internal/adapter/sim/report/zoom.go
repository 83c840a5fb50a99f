package report

// zoomScript redraws the page's charts (svg.zoomable) for another time
// window: drag across a chart to zoom in, double-click or the buttons to
// zoom out, #zoom=FROM-TO (seconds) in the address to open zoomed. It
// moves what the charts drew from the times in their data attributes:
// rect[data-a][data-b] spans, [data-t] marks, text labels (shown when they
// fit), path[data-pts] step lines, and the grids and time axes. It fetches
// nothing.
const zoomScript = `(function () {
"use strict";
var charts = Array.prototype.slice.call(document.querySelectorAll("svg.zoomable"));
if (!charts.length) { return; }
var NS = "http://www.w3.org/2000/svg";
var d0 = charts[0].dataset;
var home = {from: +d0.from, to: +d0.to}, whole = {from: 0, to: +d0.end};
var cur = home;
var steps = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
  3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800, 1209600, 2419200];
function fmtDur(s) {
  var ms = Math.round(s * 1000);
  if (ms < 1000) { return ms + (ms ? "ms" : "s"); }
  var h = Math.floor(ms / 3600000), m = Math.floor(ms / 60000) % 60, sec = (ms % 60000) / 1000;
  var out = h ? h + "h" + m + "m" + sec + "s" : m ? m + "m" + sec + "s" : sec + "s";
  if (/m0s$/.test(out)) { out = out.slice(0, -2); }
  if (/h0m$/.test(out)) { out = out.slice(0, -2); }
  return out;
}
function fmtClock(s) {
  var ms = Math.round(s * 1000), p = function (v) { return (v < 10 ? "0" : "") + v; };
  var out = Math.floor(ms / 3600000) + ":" + p(Math.floor(ms / 60000) % 60) + ":" + p(Math.floor(ms / 1000) % 60);
  return ms % 1000 ? out + "." + String(1000 + ms % 1000).slice(1) : out;
}
function ticks(from, to, n) {
  n = Math.max(n, 1);
  var span = to - from, step = 0;
  for (var i = 0; i < steps.length; i++) { if (span / steps[i] <= n) { step = steps[i]; break; } }
  if (!step) { step = Math.ceil(span / n / 86400) * 86400; }
  var out = [];
  for (var k = Math.ceil(from / step - 1e-9); k * step <= to + span * 1e-9; k++) { out.push(k * step); }
  return out;
}
function r1(v) { return Math.round(v * 10) / 10; }
function draw(svg, win) {
  var L = +svg.dataset.labelW, P = +svg.dataset.plotW, span = win.to - win.from;
  var X = function (t) { return L + (Math.max(win.from, Math.min(t, win.to)) - win.from) / span * P; };
  var outside = function (a, b) { return b < win.from || a > win.to; };
  svg.querySelectorAll("rect[data-a]").forEach(function (el) {
    var a = +el.dataset.a, b = +el.dataset.b, gap = +(el.dataset.gap || 0), dx = +(el.dataset.dx || 0);
    var x0 = X(a), w = X(b) - x0;
    if (gap) { w = Math.max(w, 3); }
    el.setAttribute("x", r1(x0 + dx));
    el.setAttribute("width", r1(Math.max(w - gap, 1)));
    el.style.display = outside(a, b) ? "none" : "";
  });
  svg.querySelectorAll("text[data-a]").forEach(function (el) {
    var a = +el.dataset.a, b = +el.dataset.b, x0 = Math.max(X(a), L) + 4, x1 = Math.min(X(b), L + P) - 4;
    var regions = [[x0, x1]];
    var mark = el.parentNode.querySelector("[data-t]");
    if (mark) {
      var mx = X(+mark.dataset.t);
      regions = [[x0, Math.min(x1, mx - 7)], [Math.max(x0, mx + 7), x1]];
    }
    var pick = "", px = 0;
    var cands = (el.dataset.labels || "").split("|");
    for (var i = 0; i < cands.length && !pick; i++) {
      for (var j = 0; j < regions.length; j++) {
        if (cands[i] && cands[i].length * 6.8 <= regions[j][1] - regions[j][0]) { pick = cands[i]; px = regions[j][0]; break; }
      }
    }
    if (!pick || outside(a, b)) { el.setAttribute("display", "none"); return; }
    el.textContent = pick;
    el.setAttribute("x", r1(px));
    el.removeAttribute("display");
  });
  svg.querySelectorAll("[data-t]").forEach(function (el) {
    var t = +el.dataset.t;
    el.setAttribute("transform", "translate(" + r1(X(t)) + " 0)");
    el.style.display = outside(t, t) ? "none" : "";
  });
  svg.querySelectorAll("path[data-pts]").forEach(function (el) {
    var base = +el.dataset.base, d = "M" + r1(X(win.from)) + " " + base, lastX = NaN, lastY = base;
    el.dataset.pts.split(" ").forEach(function (pt) {
      if (!pt) { return; }
      var c = pt.split(","), x = Math.round(X(+c[0]) * 2) / 2, y = +c[1];
      if (x !== lastX) { d += "H" + x; lastX = x; }
      if (y !== lastY) { d += "V" + y; lastY = y; }
    });
    d += "H" + r1(X(win.to));
    if (el.classList.contains("area")) { d += "V" + base + "Z"; }
    el.setAttribute("d", d);
  });
  var tk = ticks(win.from, win.to, Math.floor(P / 90));
  svg.querySelectorAll("g.grid[data-y1]").forEach(function (g) {
    while (g.firstChild) { g.removeChild(g.firstChild); }
    tk.forEach(function (t) {
      var l = document.createElementNS(NS, "line");
      l.setAttribute("x1", r1(X(t))); l.setAttribute("x2", r1(X(t)));
      l.setAttribute("y1", g.dataset.y1); l.setAttribute("y2", g.dataset.y2);
      g.appendChild(l);
    });
  });
  svg.querySelectorAll("g.axis[data-y]").forEach(function (g) {
    while (g.firstChild) { g.removeChild(g.firstChild); }
    tk.forEach(function (t) {
      var tx = document.createElementNS(NS, "text");
      tx.setAttribute("x", r1(X(t))); tx.setAttribute("y", g.dataset.y);
      tx.textContent = fmtDur(t);
      g.appendChild(tx);
    });
  });
}
function apply(win) {
  if (!(win.to - win.from >= 0.001)) { return; }
  cur = win;
  charts.forEach(function (svg) { draw(svg, win); });
  document.querySelectorAll(".zoom-label").forEach(function (el) {
    el.textContent = "showing " + fmtClock(win.from) + " – " + fmtClock(win.to) + " of " + fmtDur(whole.to);
  });
}
document.querySelectorAll("[data-zoom]").forEach(function (btn) {
  btn.addEventListener("click", function () { apply(btn.dataset.zoom === "all" ? whole : home); });
});
charts.forEach(function (svg) {
  var L = +svg.dataset.labelW, P = +svg.dataset.plotW, start = null, sel = null;
  var at = function (ev) { var r = svg.getBoundingClientRect(); return (ev.clientX - r.left) * (svg.viewBox.baseVal.width / r.width); };
  var time = function (x) { return cur.from + (Math.max(L, Math.min(x, L + P)) - L) / P * (cur.to - cur.from); };
  svg.addEventListener("mousedown", function (ev) {
    var x = at(ev);
    if (x < L || x > L + P) { return; }
    ev.preventDefault();
    start = x;
    sel = document.createElementNS(NS, "rect");
    sel.setAttribute("class", "zoom-sel"); sel.setAttribute("y", 0); sel.setAttribute("height", svg.viewBox.baseVal.height);
    sel.setAttribute("x", x); sel.setAttribute("width", 0);
    svg.appendChild(sel);
  });
  svg.addEventListener("mousemove", function (ev) {
    if (start === null) { return; }
    var x = Math.max(L, Math.min(at(ev), L + P));
    sel.setAttribute("x", Math.min(x, start)); sel.setAttribute("width", Math.abs(x - start));
  });
  var finish = function (ev) {
    if (start === null) { return; }
    var x = at(ev), a = Math.min(x, start), b = Math.max(x, start);
    svg.removeChild(sel); start = null; sel = null;
    if (b - a > 4) { apply({from: time(a), to: time(b)}); }
  };
  svg.addEventListener("mouseup", finish);
  svg.addEventListener("mouseleave", finish);
  svg.addEventListener("dblclick", function () { apply(home); });
});
var m = /zoom=([0-9.]+)-([0-9.]+)/.exec(location.hash);
if (m) { apply({from: +m[1], to: +m[2]}); } else {
  document.querySelectorAll(".zoom-label").forEach(function (el) {
    el.textContent = "showing " + fmtClock(home.from) + " – " + fmtClock(home.to) + " of " + fmtDur(whole.to);
  });
}
})();`
