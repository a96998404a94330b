// guardian-proxy dashboard: small SVG charts (no libraries, no CDN).
"use strict";

const Charts = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const COLOURS = { allow: "#2e9d5b", transform: "#d9a21b", deny: "#d64545" };
  const ACTIONS = ["allow", "transform", "deny"];
  const WORDS = { allow: "allowed", transform: "rewritten", deny: "blocked" };

  function el(name, attrs, text) {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function clear(svg) { while (svg.firstChild) svg.removeChild(svg.firstChild); }

  function viewSize(svg) {
    const vb = svg.viewBox.baseVal;
    return [vb.width, vb.height];
  }

  function empty(svg, text) {
    const [w, h] = viewSize(svg);
    svg.appendChild(el("text", { x: w / 2, y: h / 2, "text-anchor": "middle", class: "axis" }, text));
  }

  // Stacked bars of decisions per bucket (allow / transform / deny), the last `span` buckets.
  function timeline(svg, tl, span = 60) {
    clear(svg);
    const [w, h] = viewSize(svg);
    const pad = { l: 30, r: 8, t: 8, b: 22 };
    const buckets = tl.buckets || [];
    if (!buckets.length) return empty(svg, "no decisions yet");
    const step = tl.bucket_s || 60;
    // a fixed window of `span` buckets ending now (or at the newest decision, if the clocks disagree)
    const last = Math.max(buckets[buckets.length - 1][0], Math.floor(Date.now() / 1000 / step) * step);
    const first = last - (span - 1) * step;
    const n = Math.round((last - first) / step) + 1;
    const byStart = new Map(buckets.map(([t, c]) => [t, c]));
    let max = 1;
    for (let i = 0; i < n; i++) {
      const c = byStart.get(first + i * step);
      if (c) max = Math.max(max, ACTIONS.reduce((s, a) => s + (c[a] || 0), 0));
    }
    const bw = (w - pad.l - pad.r) / n;
    const ih = h - pad.t - pad.b;
    svg.appendChild(el("line", { x1: pad.l, y1: h - pad.b, x2: w - pad.r, y2: h - pad.b, class: "axisline" }));
    svg.appendChild(el("text", { x: pad.l - 4, y: pad.t + 8, "text-anchor": "end", class: "axis" }, String(max)));
    svg.appendChild(el("text", { x: pad.l - 4, y: h - pad.b, "text-anchor": "end", class: "axis" }, "0"));
    for (let i = 0; i < n; i++) {
      const t = first + i * step;
      const c = byStart.get(t);
      if (!c) continue;
      let y = h - pad.b;
      for (const a of ACTIONS) {
        const v = c[a] || 0;
        if (!v) continue;
        const bh = (v / max) * ih;
        y -= bh;
        const r = el("rect", { x: pad.l + i * bw + 1, y, width: Math.max(1, bw - 2), height: bh, fill: COLOURS[a] });
        r.appendChild(el("title", {}, `${new Date(t * 1000).toLocaleTimeString()}: ${v} ${a}`));
        svg.appendChild(r);
      }
    }
    const fmt = (t) => new Date(t * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    svg.appendChild(el("text", { x: pad.l, y: h - 6, class: "axis" }, fmt(first)));
    svg.appendChild(el("text", { x: w - pad.r, y: h - 6, "text-anchor": "end", class: "axis" }, fmt(last)));
  }

  // Histogram of R in `bins` equal bins over [0, 1].
  function histogram(svg, hist) {
    clear(svg);
    const [w, h] = viewSize(svg);
    const pad = { l: 30, r: 8, t: 8, b: 22 };
    const counts = hist.counts || [];
    if (!hist.scored) return empty(svg, "no scored decisions yet");
    const max = Math.max(1, ...counts);
    const bw = (w - pad.l - pad.r) / counts.length;
    const ih = h - pad.t - pad.b;
    svg.appendChild(el("line", { x1: pad.l, y1: h - pad.b, x2: w - pad.r, y2: h - pad.b, class: "axisline" }));
    svg.appendChild(el("text", { x: pad.l - 4, y: pad.t + 8, "text-anchor": "end", class: "axis" }, String(max)));
    // each bin's bar is stacked by decision (allowed, rewritten, blocked): the colour says what was done, not R
    const by = hist.by_action || null;
    counts.forEach((c, i) => {
      const lo = i / counts.length;
      const range = `R ${lo.toFixed(1)}–${(lo + 1 / counts.length).toFixed(1)}`;
      // the bin itself (transparent, its whole height: what a pointer hovers), then its coloured parts
      const bin = el("rect", { x: pad.l + i * bw + 1, y: h - pad.b - (c / max) * ih, width: bw - 2,
                               height: (c / max) * ih, fill: "transparent", "data-bin": i, "data-count": c });
      const split = by ? ACTIONS.filter((a) => (by[a] || [])[i]).map((a) => `${by[a][i]} ${WORDS[a]}`).join(", ") : "";
      bin.appendChild(el("title", {}, `${range}: ${c}${split ? ` (${split})` : ""}`));
      let y = h - pad.b;
      const stack = by ? ACTIONS.map((a) => [a, (by[a] || [])[i] || 0]) : [["other", c]];
      for (const [a, n] of stack) {
        if (!n) continue;
        const bh = (n / max) * ih;
        y -= bh;
        const r = el("rect", { x: pad.l + i * bw + 1, y, width: bw - 2, height: bh, fill: COLOURS[a] || "#8a93a3",
                               "data-part": i, "data-count": n, "data-action": a });
        r.appendChild(el("title", {}, `${range}: ${n} ${WORDS[a] || "decided"}`));
        svg.appendChild(r);
      }
      svg.appendChild(bin);
    });
    for (const x of [0, 0.5, 1]) {
      svg.appendChild(el("text", { x: pad.l + x * (w - pad.l - pad.r), y: h - 6,
                                   "text-anchor": x === 0 ? "start" : x === 1 ? "end" : "middle", class: "axis" },
                         x.toFixed(1)));
    }
  }

  // Horizontal bars: decisions per action.
  function actions(svg, counts) {
    clear(svg);
    const [w] = viewSize(svg);
    const total = ACTIONS.reduce((s, a) => s + (counts[a] || 0), 0);
    if (!total) return empty(svg, "–");
    const words = { allow: "allowed", transform: "rewritten", deny: "blocked" };
    ACTIONS.forEach((a, i) => {
      const v = counts[a] || 0;
      const y = 20 + i * 52;
      svg.appendChild(el("text", { x: 0, y, class: "axis" }, `${words[a]} ${v} (${Math.round((100 * v) / total)}%)`));
      svg.appendChild(el("rect", { x: 0, y: y + 6, width: w, height: 16, class: "track" }));
      svg.appendChild(el("rect", { x: 0, y: y + 6, width: (w * v) / total, height: 16, fill: COLOURS[a] }));
    });
  }

  // R against the tier's allow ceiling and deny floor, for the detail view.
  function riskBar(f) {
    const svg = el("svg", { viewBox: "0 0 300 34", class: "riskbar" });
    const W = 300;
    svg.appendChild(el("rect", { x: 0, y: 8, width: W * f.allow_ceiling, height: 12, fill: COLOURS.allow }));
    svg.appendChild(el("rect", { x: W * f.allow_ceiling, y: 8, width: W * (f.deny_floor - f.allow_ceiling), height: 12,
                                 fill: COLOURS.transform }));
    svg.appendChild(el("rect", { x: W * f.deny_floor, y: 8, width: W * (1 - f.deny_floor), height: 12, fill: COLOURS.deny }));
    const x = Math.min(W - 1, Math.max(1, W * f.R));
    svg.appendChild(el("line", { x1: x, y1: 2, x2: x, y2: 26, stroke: "#111", "stroke-width": 3 }));
    svg.appendChild(el("text", { x: Math.min(W - 40, x + 4), y: 33, class: "axis" }, `R ${f.R.toFixed(3)}`));
    return svg;
  }

  return { timeline, histogram, actions, riskBar, COLOURS };
})();
