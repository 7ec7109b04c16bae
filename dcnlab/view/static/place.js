// dcnlab's live view: where labels go. The flows' rates are placed clear of every other label and line (the
// layouts in dcnlab/view keep the nodes' own names apart); view.js draws, this file only places. Boxes are
// convex quadrilaterals (four [x, y] points), tested against each other by the separating-axis test.
"use strict";
window.dcnlabPlace = (() => {
  const SVGNS = "http://www.w3.org/2000/svg";
  // each flow's rate ({g: its group, label, segs: its drawn segments [[{x, y}, {x, y}], ...]}) is written along its
  // path, as a map names a road, where it covers no name, switch, host, group label, flow line or other rate: the
  // first free spot along its links (its first link first, close to the line first, middle first, either side),
  // else the nearest free spot around its first link's middle, level, with a thin leader to it. Boxes are in
  // drawing units (from getBBox, so the names hidden at this zoom count too).
  function rates(svg, items) {
    const keep = svg.getAttribute("class") || "";
    svg.setAttribute("class", "");                        // names hidden at this zoom count too
    const inv = svg.getScreenCTM().inverse(), taken = grid(40);
    for (const el of svg.querySelectorAll("#nodes text, #nodes rect, #nodes circle, #groups text")) {
      const q = quad(el, inv);
      if (q) taken.add(q);
    }
    svg.setAttribute("class", keep);
    for (const { segs } of items) for (const [a, c] of segs) {       // the flows' lines (cased: 5.5 wide)
      const dx = c.x - a.x, dy = c.y - a.y, len = Math.hypot(dx, dy) || 1, nx = -dy / len * 3, ny = dx / len * 3;
      taken.add([[a.x + nx, a.y + ny], [c.x + nx, c.y + ny], [c.x - nx, c.y - ny], [a.x - nx, a.y - ny]]);
    }
    for (const { g, label, segs } of items) {
      const t = g.appendChild(document.createElementNS(SVGNS, "text"));
      t.setAttribute("class", "rate");
      t.textContent = label;
      const b = t.getBBox(), w = b.width + 3, h = b.height + 1;
      // the box of the label centred at (cx, cy), its baseline along (dx, dy) (a unit vector), if free
      const at = (cx, cy, dx, dy) => {
        const r = [[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]].map(([x, y]) => [cx + x * dx - y * dy, cy + x * dy + y * dx]);
        return taken.free(r) ? { r, cx, cy, ang: Math.atan2(dy, dx) * 180 / Math.PI } : null;
      };
      let spot = null, lead = null;
      for (const [a, c] of segs) {
        const len = Math.hypot(c.x - a.x, c.y - a.y) || 1, dx = (c.x - a.x) / len, dy = (c.y - a.y) / len;
        const [ux, uy] = dx < -1e-9 || (Math.abs(dx) < 1e-9 && dy < 0) ? [-dx, -dy] : [dx, dy];   // reads left to right
        for (const off of [2, 8, 16]) for (const f of [0.5, 0.35, 0.65, 0.2, 0.8]) for (const side of [1, -1]) {
          const e = h / 2 + off;
          spot = spot || at(a.x + (c.x - a.x) * f - side * uy * e, a.y + (c.y - a.y) * f + side * ux * e, ux, uy);
        }
        if (spot) break;
      }
      const [a, c] = segs[0], mx = (a.x + c.x) / 2, my = (a.y + c.y) / 2;
      for (let rr = 12; !spot && rr < 600; rr += 6) for (let k = 0; !spot && k < 32; k++) {
        spot = at(mx + rr * Math.cos(k * Math.PI / 16), my + rr * Math.sin(k * Math.PI / 16), 1, 0);
        lead = spot && [mx, my];
      }
      spot = spot || { r: [[mx - w / 2, my - h / 2], [mx + w / 2, my - h / 2], [mx + w / 2, my + h / 2], [mx - w / 2, my + h / 2]], cx: mx, cy: my, ang: 0 };
      t.setAttribute("x", -b.x - b.width / 2); t.setAttribute("y", -b.y - b.height / 2);
      t.setAttribute("transform", `translate(${spot.cx},${spot.cy}) rotate(${spot.ang})`);
      if (lead) {
        const ex = Math.max(spot.r[0][0], Math.min(lead[0], spot.r[2][0])), ey = Math.max(spot.r[0][1], Math.min(lead[1], spot.r[2][1]));
        const path = g.insertBefore(document.createElementNS(SVGNS, "path"), t);
        path.setAttribute("class", "leader"); path.setAttribute("d", `M${lead[0]},${lead[1]}L${ex},${ey}`);
      }
      taken.add(spot.r);
    }
  }
  // an element's box (getBBox, in its own units) as four points in the drawing's units
  function quad(el, inv) {
    const b = el.getBBox();
    if (!b.width && !b.height) return null;
    const m = inv.multiply(el.getScreenCTM());
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => { const p = new DOMPoint(x, y).matrixTransform(m); return [p.x, p.y]; });
  }
  // convex quadrilaterals apart: one of their edges' normals separates them
  function apart(p, q) {
    for (const poly of [p, q]) for (let i = 0; i < 4; i++) {
      const ax = poly[(i + 1) % 4][1] - poly[i][1], ay = poly[i][0] - poly[(i + 1) % 4][0];
      let a0 = Infinity, a1 = -Infinity, b0 = Infinity, b1 = -Infinity;
      for (const [x, y] of p) { const v = x * ax + y * ay; a0 = Math.min(a0, v); a1 = Math.max(a1, v); }
      for (const [x, y] of q) { const v = x * ax + y * ay; b0 = Math.min(b0, v); b1 = Math.max(b1, v); }
      if (a1 <= b0 || b1 <= a0) return true;
    }
    return false;
  }
  // taken boxes in square cells of `size` units, so that a test meets only its neighbours
  function grid(size) {
    const cells = new Map();
    const keys = (q) => {
      const xs = q.map((p) => p[0]), ys = q.map((p) => p[1]), out = [];
      for (let i = Math.floor(Math.min(...xs) / size); i <= Math.floor(Math.max(...xs) / size); i++)
        for (let j = Math.floor(Math.min(...ys) / size); j <= Math.floor(Math.max(...ys) / size); j++) out.push(`${i},${j}`);
      return out;
    };
    return {
      add(q) { for (const k of keys(q)) { if (!cells.has(k)) cells.set(k, []); cells.get(k).push(q); } },
      free(q) { return keys(q).every((k) => (cells.get(k) || []).every((o) => apart(q, o))); },
    };
  }
  return { rates, quad, apart, grid };
})();
