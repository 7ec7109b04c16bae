// dcnlab's live view: draws /api/topology once as SVG, then updates link classes in place from
// /api/rates every second; a tree picker highlights /api/trees' links; clicks read a switch or a link.
"use strict";
(() => {
  const SVGNS = "http://www.w3.org/2000/svg";
  const token = new URLSearchParams(location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  const api = async (path) => {
    const r = await fetch(`${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}`);
    if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
    return r.json();
  };
  const make = (tag, attrs, parent, ns = SVGNS) => {
    const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  };
  const text = (tag, s, parent) => { const e = make(tag, {}, parent, null); e.textContent = s; return e; };
  // load classes by the busier direction's bytes/s: idle, <10 kB/s, <100 kB/s, <1 MB/s, <10 MB/s, <100 MB/s, more
  const BOUNDS = [1, 1e4, 1e5, 1e6, 1e7, 1e8];
  const LEGEND = ["idle", "<10 kB/s", "<100 kB/s", "<1 MB/s", "<10 MB/s", "<100 MB/s", "≥100 MB/s"];
  const loadClass = (bps) => { let i = 0; while (i < BOUNDS.length && bps >= BOUNDS[i]) i++; return i; };
  const fmt = (x, unit) => {
    if (x === null || x === undefined) return "–";
    const p = ["", "k", "M", "G"]; let i = 0;
    while (x >= 1000 && i < p.length - 1) { x /= 1000; i++; }
    return `${x.toFixed(x < 10 && i ? 2 : 0)} ${p[i]}${unit}`;
  };

  const stats = { loadMs: null, updateMs: [], switches: 0, hosts: 0, links: 0 };
  window.dcnlabView = stats;
  let topo = null, trees = [], linkEls = [], haloEls = [], nodeEls = new Map();
  let load = [], state = [], inTree = [], treeRoles = new Map(), selected = null;

  function linkClass(i) {
    let c = "link l" + load[i];
    if (state[i]) c += " " + state[i];
    if (inTree[i]) c += " tree";
    else if (trees.active) c += " dim";
    if (selected === "l" + i) c += " sel";
    return c;
  }
  function refreshLink(i) {
    const c = linkClass(i);
    if (linkEls[i].getAttribute("class") !== c) linkEls[i].setAttribute("class", c);
  }

  function draw() {
    const svg = $("fabric");
    svg.setAttribute("viewBox", `0 0 ${topo.width} ${topo.height}`);
    // a picked tree is a halo under its links, so their load colours stay visible on it
    groupFrames(make("g", { id: "groups" }, svg));   // Dragonfly groups: a frame and a label each, under all
    const gh = make("g", { id: "halos" }, svg);
    const gl = make("g", { id: "links" }, svg);
    make("g", { id: "flows" }, svg);                 // tenants' flows, over the links, under the nodes
    const gn = make("g", { id: "nodes" }, svg);
    make("g", { id: "open" }, svg);                  // opened blocks, over everything
    make("g", { id: "dropmarks" }, svg);             // losses the programs count, over all
    const pos = new Map(topo.nodes.map((n) => [n.id, n]));
    for (const l of topo.links) {
      const a = pos.get(l.a), b = pos.get(l.b);
      const e = make("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "link l0", "data-id": l.id }, gl);
      const h = make("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "halo" }, gh);
      if (l.count) { e.style.strokeWidth = String(1 + Math.log2(l.count) / 2); h.style.strokeWidth = String(9 + Math.log2(l.count) / 2); }
      haloEls[l.id] = h;
      linkEls[l.id] = e; load[l.id] = 0; state[l.id] = ""; inTree[l.id] = false;
      e.addEventListener("click", (ev) => { ev.stopPropagation(); showLink(l); });
    }
    for (const n of topo.nodes) { nodeGroup(n, gn); where.set(n.id, n); }
    stats.links = topo.links.length;
    zoomPan(svg);
  }

  // a Dragonfly group's frame (a circle around its routers) and its label (beyond its hosts), from the layout
  function groupFrames(parent) {
    for (const grp of topo.groups || []) {
      const e = make("g", { class: "group", "data-group": grp.id }, parent);
      make("circle", { cx: grp.x, cy: grp.y, r: grp.r }, e);
      const t = make("text", { x: grp.lx, y: grp.ly, "text-anchor": "middle", "dominant-baseline": "central" }, e);
      t.textContent = grp.label; t.style.fontSize = `${grp.size}px`;
      make("title", {}, e).textContent = `${grp.id}: ${grp.label}`;
    }
  }

  // names too small to read at the current zoom are hidden (hover a node for its name; zoom in to show them):
  // the layouts keep them apart at every zoom, so this is for legibility only
  const MIN_PX = 5;
  function legible() {
    const svg = $("fabric"), r = svg.getBoundingClientRect();
    const k = Math.min(r.width / vb[2], r.height / vb[3]);       // px per drawing unit (the viewBox "meets")
    svg.classList.toggle("tiny-hosts", 8 * k < MIN_PX);
    svg.classList.toggle("tiny-switches", 10 * k < MIN_PX);
    stats.pxPerUnit = k;
  }

  // one node (or block) as an SVG group at (n.x, n.y); members of an opened block are drawn small
  function nodeGroup(n, parent) {
    const g = make("g", { class: `node ${n.role}${n.s ? " member-of" : ""}`,
      transform: `translate(${n.x},${n.y})${n.s ? ` scale(${n.glyph})` : ""}`, "data-id": n.id }, parent);
    if (n.role === "host") {
      make("circle", { r: 3.5 }, g);
      const flip = n.ang !== undefined && Math.abs(n.ang) > 90;     // radial labels read left to right
      make("text", n.ang === undefined ? { transform: "translate(-3,7) rotate(90)" }
        : { transform: `rotate(${flip ? n.ang + 180 : n.ang}) translate(${flip ? -6 : 6},3)`,
            "text-anchor": flip ? "end" : "start" }, g).textContent = n.id;
      stats.hosts++;
    } else if (n.role === "block") {
      const label = `${n.label || n.id} (${n.count})`, w = 5.6 * label.length + 8;
      make("rect", { x: -w / 2, y: -12, width: w, height: 24, rx: 3 }, g);
      make("text", { x: 0, y: 4, "text-anchor": "middle" }, g).textContent = label;
    } else {
      const w = Math.max(24, 6.2 * n.id.length + 6);
      make("rect", { x: -w / 2, y: -8, width: w, height: 16, rx: 2 }, g);
      make("text", { x: 0, y: 3.5, "text-anchor": "middle" }, g).textContent = n.id;
      stats.switches++;
    }
    make("title", {}, g).textContent = n.role === "block" ? `${n.count} ${n.of} nodes (${n.layer}, ${n.group})`
      + (n.first ? `: ${n.first} … ${n.last}` : "") + "; click to open" : `${n.id} (${n.role}${n.layer ? ", " + n.layer : ""})`;
    nodeEls.set(n.id, g);
    g.addEventListener("click", (ev) => { ev.stopPropagation(); showNode(n); });
    return g;
  }

  // opening a block (/api/block/ID): its members, or sub-blocks of a big one, drawn in place around its centre;
  // the bundles to it give way to the detail's links to the rest, each drawn to the deepest shown holder of
  // its peer; closing it (its frame, or a click on it again) restores the bundles
  const opened = new Map(), where = new Map();      // where: drawn id -> {x, y}
  async function toggleOpen(n) {
    if (opened.has(n.id)) { closeBlock(n.id); return; }
    const at = where.get(n.id);
    if (!at) return;
    $("status").textContent = `opening ${n.id}…`;
    const d = await api(`/api/block/${encodeURIComponent(n.id)}`);
    if (opened.has(n.id) || !where.has(n.id)) return;
    const g = make("g", { class: "opened", "data-block": n.id }, $("open"));
    // each opening draws smaller (its children's glyphs, spacing and own openings), so that a block opened
    // inside an opened one fits in its place; the page zooms onto it
    const s = at.s || 1, pad = (d.members ? 14 : 40) * s;
    const xs = d.nodes.map((c) => c.dx * s), ys = d.nodes.map((c) => c.dy * s);
    const x0 = at.x + Math.min(...xs) - pad, y0 = at.y + Math.min(...ys) - pad;
    const fw = Math.max(...xs) - Math.min(...xs) + 2 * pad, fh = Math.max(...ys) - Math.min(...ys) + 2 * pad;
    const frame = make("rect", { class: "frame", x: x0, y: y0, width: fw, height: fh, rx: 4 }, g);
    make("title", {}, frame).textContent = `${n.id}: click to close`;
    frame.addEventListener("click", (ev) => { ev.stopPropagation(); closeBlock(n.id); });
    const fl = make("text", { class: "frame-label", x: x0 + 2 * s, y: y0 - 3 * s }, g);
    fl.textContent = `${n.id} (${d.count}) ✕`; fl.style.fontSize = `${10 * s}px`;
    const gl = make("g", {}, g), gx = make("g", {}, g), gn = make("g", {}, g);
    const kids = d.nodes.map((c) => Object.assign({}, c, { x: at.x + c.dx * s, y: at.y + c.dy * s, s: 0.3 * s,
      glyph: (d.members ? 0.3 : 0.8) * s }));
    for (const c of kids) where.set(c.id, c);
    const inner = d.links.map((l) => {
      const a = where.get(l.a), b = where.get(l.b);
      const e = make("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "link l0 inner" }, gl);
      if (l.count > 1) e.style.strokeWidth = String(1 + Math.log2(l.count) / 2);
      return e;
    });
    for (const c of kids) nodeGroup(c, gn);
    opened.set(n.id, { d, g, gx, inner, kids });
    nodeEls.get(n.id)?.classList.add("open");
    relink();
    fitTo(x0, y0 - 12 * s, fw, fh + 12 * s);
    stats.opened = opened.size;
    $("status").textContent = `${n.id} opened: ${d.members ? d.nodes.length + " members" : d.nodes.length + " sub-blocks"}`;
  }
  function closeBlock(id) {
    for (const k of [...opened.keys()]) if (k.startsWith(id + "#") || k === id) {
      const o = opened.get(k); opened.delete(k);
      o.g.remove();
      for (const c of o.kids) { where.delete(c.id); nodeEls.delete(c.id); }
      nodeEls.get(k)?.classList.remove("open");
    }
    relink();
    stats.opened = opened.size;
  }
  function relink() {
    topo.links.forEach((l, i) => { linkEls[i].style.display = opened.has(l.a) || opened.has(l.b) ? "none" : ""; });
    const t = trees.active;
    for (const [, o] of opened) {
      const tt = t && o.d.trees[t.id], on = new Set(tt ? tt.links : []), ext = new Set(tt ? tt.external : []);
      o.d.links.forEach((l, i) => {
        o.inner[i].style.display = opened.has(l.a) || opened.has(l.b) ? "none" : "";
        o.inner[i].setAttribute("class", "link l0 inner" + (on.has(i) ? " tree" : t ? " dim" : ""));
      });
      for (const c of o.kids) {
        const g = nodeEls.get(c.id);
        for (const r of ["root", "receiver", "sender", "aggregator", "member"]) g?.classList.toggle(r, !!tt && tt.roles[c.id] === r);
      }
      o.gx.textContent = "";
      o.d.external.forEach((e, i) => {
        if (opened.has(e.a)) return;
        let to = null;
        for (const id of e.chain) if (where.has(id)) to = id;
        if (!to) return;
        const a = where.get(e.a), b = where.get(to);
        const x = make("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "link l0 outer" + (ext.has(i) ? " tree" : t ? " dim" : "") }, o.gx);
        if (e.count > 1) x.style.strokeWidth = String(1 + Math.log2(e.count) / 3);
      });
    }
  }

  let vb = null, moved = false;        // moved: the user zoomed, panned or opened a block
  // the whole drawing above an overlay at the bottom of the view (the tenants' legend), until the user moves it
  function clearOf(el) {
    if (moved) return;
    const svg = $("fabric"), r = svg.getBoundingClientRect(), below = el.getBoundingClientRect().height + 16;
    const avail = Math.max(r.height - below, r.height / 2), k = Math.min(r.width / topo.width, avail / topo.height);
    vb = [-(r.width / k - topo.width) / 2, -(avail / k - topo.height) / 2, r.width / k, r.height / k];
    svg.setAttribute("viewBox", vb.join(" "));
    legible();
  }
  // show the box (x, y, w, h) with a margin, unless the view already shows it whole at a readable scale
  function fitTo(x, y, w, h) {
    const svg = $("fabric");
    if (vb && x >= vb[0] && y >= vb[1] && x + w <= vb[0] + vb[2] && y + h <= vb[1] + vb[3] && w > vb[2] / 4) return;
    const r = svg.getBoundingClientRect(), aspect = r.width / Math.max(r.height, 1);
    let W = w * 1.5 + 40, H = h * 1.5 + 40;
    if (W / H < aspect) W = H * aspect; else H = W / aspect;
    vb = [x + w / 2 - W / 2, y + h / 2 - H / 2, W, H];
    svg.setAttribute("viewBox", vb.join(" "));
    moved = true;
    legible();
  }

  function zoomPan(svg) {
    vb = [0, 0, topo.width, topo.height];
    let drag = null;
    const apply = () => { svg.setAttribute("viewBox", vb.join(" ")); moved = true; legible(); };
    legible();
    window.addEventListener("resize", legible);
    svg.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const r = svg.getBoundingClientRect(), f = ev.deltaY > 0 ? 1.2 : 1 / 1.2;
      const mx = vb[0] + (ev.clientX - r.left) / r.width * vb[2], my = vb[1] + (ev.clientY - r.top) / r.height * vb[3];
      vb = [mx - (mx - vb[0]) * f, my - (my - vb[1]) * f, vb[2] * f, vb[3] * f]; apply();
    }, { passive: false });
    svg.addEventListener("mousedown", (ev) => { drag = [ev.clientX, ev.clientY, vb[0], vb[1]]; });
    window.addEventListener("mouseup", () => { drag = null; });
    svg.addEventListener("mousemove", (ev) => {
      if (!drag) return;
      const r = svg.getBoundingClientRect();
      vb[0] = drag[2] - (ev.clientX - drag[0]) / r.width * vb[2];
      vb[1] = drag[3] - (ev.clientY - drag[1]) / r.height * vb[3]; apply();
    });
  }

  function legend() {
    const box = $("legend");
    box.textContent = "load (busier direction):";
    LEGEND.forEach((s, i) => { make("span", { class: `sw l${i}` }, box, null); box.append(s); });
    make("span", { class: "sw tree" }, box, null); box.append("picked tree (halo)");
    box.append("  – – cut   ··· shaped");
    make("span", { class: "sw lossy" }, box, null); box.append("switch out < 90% of in");
  }

  function pickTree(id) {
    const t = trees.find((x) => x.id === id);
    trees.active = t || null;
    const on = new Set(t ? t.links : []);
    for (const [n] of treeRoles) nodeEls.get(n)?.classList.remove(treeRoles.get(n));
    treeRoles = new Map(Object.entries(t ? t.roles : {}));
    for (const [n, r] of treeRoles) nodeEls.get(n)?.classList.add(r);
    for (let i = 0; i < linkEls.length; i++) {
      if (inTree[i] !== on.has(i)) haloEls[i].setAttribute("class", on.has(i) ? "halo on" : "halo");
      inTree[i] = on.has(i); refreshLink(i);
    }
    if (opened.size) relink();
  }

  // the trees, again when /api/rates says they changed (an experiment added a group); the pick is kept
  let treesVersion = null;
  async function loadTrees() {
    const got = await api("/api/trees"), sel = $("trees"), keep = sel.value;
    treesVersion = got.version; trees = got.trees; trees.active = null;
    while (sel.options.length > 1) sel.remove(1);
    for (const t of trees) { const o = text("option", t.label, sel); o.value = t.id; }
    sel.value = trees.some((t) => t.id === keep) ? keep : "";
    pickTree(sel.value);
    stats.trees = trees.length;
  }

  // tenants' flows (/api/flows): each flow a line of its tenant's colour along its path, side by side with the
  // other flows on a shared link, its rate written beside its path (placeRates); a legend per tenant with its share
  let flowsVersion = null;
  async function loadFlows() {
    const got = await api("/api/flows");
    flowsVersion = got.version;
    drawFlows(got);
  }
  function drawFlows(got) {
    const g = $("flows"), box = $("tenants");
    g.textContent = ""; box.textContent = "";
    stats.flows = got.flows.length; stats.tenants = got.tenants.length;
    if (!got.flows.length && !got.tenants.length) { box.hidden = true; return; }
    const pos = new Map(topo.nodes.map((n) => [n.id, n])), byId = new Map(topo.links.map((l) => [l.id, l]));
    const on = new Map();                                  // link id -> flows crossing it, in order
    for (const f of got.flows) for (const [id] of f.links) { if (!on.has(id)) on.set(id, []); on.get(id).push(f.id); }
    const rates = [];
    for (const f of got.flows) {
      const fg = make("g", { class: `flow t${f.colour}`, "data-flow": f.id, "data-tenant": f.tenant }, g);
      const segs = [];
      f.links.forEach(([id, fwd]) => {
        const l = byId.get(id), a = pos.get(fwd ? l.a : l.b), b = pos.get(fwd ? l.b : l.a);
        const mates = on.get(id), slot = mates.indexOf(f.id) - (mates.length - 1) / 2;
        const dx = b.x - a.x, dy = b.y - a.y, len = Math.hypot(dx, dy) || 1;
        const ox = -dy / len * 3.2 * slot, oy = dx / len * 3.2 * slot;
        const ends = { x1: a.x + ox, y1: a.y + oy, x2: b.x + ox, y2: b.y + oy };
        make("line", { ...ends, class: "casing" }, fg);        // white under it: not a load colour's link
        make("line", ends, fg);
        segs.push([{ x: ends.x1, y: ends.y1 }, { x: ends.x2, y: ends.y2 }]);
      });
      rates.push({ g: fg, label: fmt(f.rate_bps, "b/s"), segs });
      make("title", {}, fg).textContent = `${f.id} (${f.tenant}): ${fmt(f.rate_bps, "b/s")}`;
      fg.addEventListener("click", (ev) => { ev.stopPropagation(); showFlow(f); });
    }
    window.dcnlabPlace.rates($("fabric"), rates);
    box.hidden = false;
    const neck = got.bottleneck || {};
    text("div", `tenants' flows (white-cased lines)${neck.rate_bps ? `, bottleneck ${(neck.nodes || []).join("→")} ${fmt(neck.rate_bps, "b/s")}` : ""}`
      + (got.note ? ` (${got.note})` : ""), box).className = "head";
    for (const t of got.tenants) {
      const row = text("div", "", box); row.className = "tenant"; row.dataset.tenant = t.name;
      make("span", { class: `sw t${t.colour}` }, row, null);
      row.append(`${t.name} (weight ${t.weight}): ${t.flows} flow${t.flows === 1 ? "" : "s"}, ${got.sent ? "sends " : ""}${fmt(t.rate_bps, "b/s")}`
        + (t.share !== null ? `, ${(100 * t.share).toFixed(1)}% of the bottleneck${got.sent ? "'s rate" : ""}` : "")
        + (t.target_share !== null && t.target_share !== undefined ? ` (target ${(100 * t.target_share).toFixed(1)}%)` : "")
        + (t.meter_bps ? `, meter ${fmt(t.meter_bps, "b/s")}` : ""));
    }
    clearOf(box);
  }
  function showFlow(f) {
    const p = panel(`flow ${f.id} (${f.tenant})`);
    pre(p, `${f.src} → ${f.dst}: ${fmt(f.rate_bps, "b/s")}`);
    if (f.ccti !== null) pre(p, `CCTI ${f.ccti}` + (f.ccti_increase !== null ? `, CCTI_Increase ${f.ccti_increase}` : ""));
    if (f.meter_bps) pre(p, `tenant's meter ${fmt(f.meter_bps, "b/s")}`);
    pre(p, `path: ${f.links.map(([id, fwd]) => { const l = topo.links.find((x) => x.id === id); return fwd ? `${l.a}→${l.b}` : `${l.b}→${l.a}`; }).join(", ")}`);
  }

  function applyRates(r) {
    const t = performance.now();
    const busy = r.links || {}, st = r.state || {};
    for (let i = 0; i < linkEls.length; i++) {
      const x = busy[i], s = st[i] || "";
      const c = x ? loadClass(Math.max(x[0], x[1])) : 0;
      if (c !== load[i] || s !== state[i]) { load[i] = c; state[i] = s; refreshLink(i); }
    }
    // a switch that forwards less than 90% of what it gets (at least 10 pkt/s short) is outlined as losing
    const nodes = r.nodes || {};
    for (const [id, g] of nodeEls) {
      const io = nodes[id], lossy = !!io && g.classList.contains("switch") && io[0] - io[1] > Math.max(10, 0.1 * io[0]);
      if (g.classList.contains("lossy") !== lossy) g.classList.toggle("lossy", lossy);
    }
    drops(r.drops);
    const ms = performance.now() - t;
    stats.updateMs.push(ms); if (stats.updateMs.length > 100) stats.updateMs.shift();
    stats.rates = r;
    if (r.flows !== undefined && flowsVersion !== null && r.flows !== flowsVersion) {
      flowsVersion = r.flows; loadFlows().catch((e) => { $("status").textContent = String(e); });
    }
    if (r.trees !== undefined && treesVersion !== null && r.trees !== treesVersion) {
      treesVersion = r.trees; loadTrees().catch((e) => { $("status").textContent = String(e); });
    }
    const el = $("status");
    el.className = r.note && topo.live ? "bad" : "";
    el.textContent = (topo.live ? `live, every ${r.dt || "–"} s, busiest ${fmt(r.max, "B/s")}` : "model backend, no traffic")
      + (r.note && topo.live ? ` (${r.note})` : "") + `; update ${ms.toFixed(1)} ms`;
  }

  // lost packets where the program counts them: a red marker with packets/s at each losing switch; where no
  // switch's program counts drops the header says so (never a zero)
  function drops(d) {
    const box = $("drops"), g = $("dropmarks");
    g.textContent = "";
    if (!d || !topo.live) { box.textContent = ""; return; }
    if (d.counted !== true) { box.textContent = d.note || ""; box.className = "none"; return; }
    const losing = Object.entries(d.switches).filter(([, x]) => x.pps > 0);
    const sum = losing.reduce((a, [, x]) => a + x.pps, 0);
    box.className = losing.length ? "losing" : "";
    box.textContent = losing.length ? `losses (programs' drop counters): ${fmt(sum, "pkt/s")} at ${losing.length} switch${losing.length > 1 ? "es" : ""}`
      : `losses (programs' drop counters): none${d.note ? " (" + d.note + ")" : ""}`;
    for (const [sw, x] of losing) {
      const at = where.get(sw);
      if (!at) continue;
      const m = make("g", { class: "dropmark", "data-switch": sw, transform: `translate(${at.x + 14},${at.y - 14})` }, g);
      make("circle", { r: 5 }, m);
      make("text", { x: 8, y: 3 }, m).textContent = fmt(x.pps, "pkt/s") + " lost";
      make("title", {}, m).textContent = x.cells.map(([c, pps, n]) => `${c}: ${fmt(pps, "pkt/s")} (${n} in all)`).join("\n");
    }
  }

  stats.apply = applyRates;     // for tests and measurements: apply one /api/rates answer now

  async function poll() {
    try { applyRates(await api("/api/rates")); } catch (e) { $("status").textContent = String(e); $("status").className = "bad"; }
    if (topo.live) setTimeout(poll, 1000);
  }

  function select(key) {
    const old = selected; selected = key;
    for (const k of [old, key]) {
      if (!k) continue;
      if (k[0] === "l") refreshLink(Number(k.slice(1)));
      else nodeEls.get(k.slice(1))?.classList.toggle("sel", k === key);
    }
  }

  function panel(title) {
    const p = $("panel"); p.textContent = ""; text("h3", title, p); return p;
  }
  function pre(p, s) { text("pre", s, p); }

  async function showNode(n) {
    select("n" + n.id);
    const p = panel(n.role === "block" ? `${n.id}: ${n.count} ${n.of} nodes` : `${n.id} (${n.role})`);
    const held = trees.active && trees.active.members && trees.active.members[n.id];
    if (held) pre(p, `picked tree: ${Object.entries(held).map(([r, c]) => `${c} ${r}${c > 1 ? "s" : ""}`).join(", ")} in this block`);
    const io = stats.rates && stats.rates.nodes && stats.rates.nodes[n.id];
    if (io && topo.live) pre(p, `in ${fmt(io[0], "pkt/s")}, out ${fmt(io[1], "pkt/s")}` + (n.role === "host" ? ""
      : io[1] < io[0] ? `: ${fmt(io[0] - io[1], "pkt/s")} (${(100 * (io[0] - io[1]) / io[0]).toFixed(0)}%) dropped or consumed here`
      : io[1] > io[0] ? `: ${fmt(io[1] - io[0], "pkt/s")} more out (copies)` : ""));
    if (n.role === "block" && topo.aggregated) {
      pre(p, opened.has(n.id) ? "closed (click it again to open)" : "opened in place (click its frame to close)");
      toggleOpen(n).catch((e) => { $("status").textContent = String(e); $("status").className = "bad"; });
    }
    if (n.role === "host" || n.role === "block") return;
    const dr = stats.rates && stats.rates.drops;
    if (dr && topo.live && dr.counted === true) {
      const x = dr.switches[n.id];
      pre(p, (dr.uncounted || []).includes(n.id) ? "this switch's program counts no drops"
        : x ? "lost (drop counters): " + x.cells.map(([c, pps, m]) => `${c} ${fmt(pps, "pkt/s")}, ${m} in all`).join("; ")
        : "lost (drop counters): none");
    } else if (dr && topo.live && dr.counted === false) pre(p, "this program counts no drops");
    pre(p, "reading back…");
    const d = await api(`/api/switch/${encodeURIComponent(n.id)}`).catch((e) => ({ error: String(e) }));
    p.lastChild.remove();
    if (d.note || d.error) pre(p, d.note || d.error);
    for (const [name, t] of Object.entries(d.tables || {})) {
      text("h4", `table ${name}: ${t.error ? "error" : t.count + " entries"}`, p);
      pre(p, t.error || t.entries.join("\n") + (t.count > t.entries.length ? `\n… ${t.count - t.entries.length} more` : ""));
    }
    for (const [kind, what] of [["counters", "[index, packets, bytes]"], ["registers", "[index, value]"]]) {
      for (const [name, c] of Object.entries(d[kind] || {})) {
        text("h4", `${kind.slice(0, -1)} ${name}: ${c.error ? "error" : c.nonzero + " non-zero cells " + what}`, p);
        pre(p, c.error || c.cells.map((x) => x.join(" ")).join("\n"));
      }
    }
  }

  async function showLink(l) {
    select("l" + l.id);
    const p = panel(`${l.a} — ${l.b}${l.count ? ` (${l.count} links)` : ""}`);
    const r = stats.rates && stats.rates.links[l.id];
    if (r) pre(p, `${l.a} → ${l.b}: ${fmt(r[0], "B/s")}, ${fmt(r[2], "pkt/s")}\n${l.b} → ${l.a}: ${fmt(r[1], "B/s")}, ${fmt(r[3], "pkt/s")}`);
    const carried = trees.active && trees.active.bundles && trees.active.bundles[l.id];
    if (carried) pre(p, `picked tree: ${carried} of its links in this bundle`);
    if (l.count || !topo.live) return;
    const d = await api(`/api/link/${encodeURIComponent(l.a)}/${encodeURIComponent(l.b)}`).catch((e) => ({ error: String(e) }));
    if (d.error || d.note) { pre(p, d.error || d.note); return; }
    pre(p, `state: ${d.state}`);
    for (const [dir, c] of Object.entries(d)) {
      if (!dir.includes("->")) continue;
      pre(p, `${dir}: ${c.bytes} bytes, ${c.packets} packets, ${c.dropped} dropped\n  ${fmt(c.bytes_per_s, "B/s")}, ${fmt(c.packets_per_s, "pkt/s")}`);
    }
  }

  async function main() {
    const t0 = performance.now();
    try {
      topo = await api("/api/topology");
      $("title").textContent = topo.spec + (topo.aggregated ? ` (${topo.nodes_total} nodes as ${topo.nodes.length} blocks)` : "");
      document.title = `dcnlab view: ${topo.spec}`;
      draw(); legend();
      await loadTrees();
      await loadFlows();
      $("trees").addEventListener("change", () => pickTree($("trees").value));
      $("fabric").addEventListener("click", () => { select(null); });
      await poll();
      stats.loadMs = performance.now() - t0;            // from the script's start
      stats.readyMs = performance.now();                // from the navigation's start (Performance API)
      document.body.dataset.ready = "1";
    } catch (e) {
      $("status").textContent = String(e); $("status").className = "bad";
    }
  }
  main();
})();
