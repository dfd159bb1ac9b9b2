// graphflow drawing viewer: lays the drawing model out as nested boxes and draws it as SVG.
(function () {
  "use strict";
  var SVGNS = "http://www.w3.org/2000/svg";
  var drawing = JSON.parse(document.getElementById("graphflow-drawing").textContent);
  var COLORS = {
    done: ["#d4edda", "#2e7d32"], running: ["#cfe2ff", "#0d6efd"], failed: ["#f8d7da", "#c62828"],
    interrupted: ["#fff3cd", "#e67e00"], not_reached: ["#eeeeee", "#9e9e9e"]
  };
  var MARKS = { done: "✔ done", running: "▶ running", failed: "✖ failed",
    interrupted: "‖ interrupted", not_reached: "○ not reached" };
  var LINE = 15, PAD = 12, GAP_X = 22, GAP_Y = 34, TITLE = 24, GUTTER_GAP = 14;
  var agents = {}, nodes = {}, collapsed = {}, selected = null;
  drawing.agents.forEach(function (a) { agents[a.id] = a; });
  drawing.nodes.forEach(function (n) { nodes[n.id] = n; });

  var measureCtx = document.createElement("canvas").getContext("2d");
  function textWidth(s, size, bold) {
    if (measureCtx) {
      measureCtx.font = (bold ? "bold " : "") + size + "px 'DejaVu Sans', Helvetica, Arial, sans-serif";
      return measureCtx.measureText(s).width;
    }
    return s.length * size * (bold ? 0.7 : 0.6);
  }
  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) { if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]); }
    if (parent) parent.appendChild(e);
    return e;
  }
  function runLine(run) {
    if (!run) return "";
    var head = MARKS[run.status];
    if (run.detail && run.detail !== "completed" && run.detail !== "running") {
      head += " (" + (run.detail.length > 60 ? run.detail.slice(0, 59) + "…" : run.detail) + ")";
    }
    var parts = [head];
    if (run.model_calls !== null && run.model_calls !== undefined) parts.push("model calls " + run.model_calls);
    if (run.tool_calls !== null && run.tool_calls !== undefined) parts.push("tool calls " + run.tool_calls);
    if (run.loop_passes !== null && run.loop_passes !== undefined) parts.push("passes " + run.loop_passes);
    return parts.join(" · ");
  }

  // -- structure ---------------------------------------------------------------------------------
  var declared = {};  // agent id -> its place in the tree (depth first, as declared)
  drawing.agents.forEach(function (a, i) { declared[a.id] = i; });
  function membersOf(owner) {  // direct members of a box: node ids and boxed agent ids, in order
    var out = [];
    drawing.nodes.forEach(function (n, i) {
      if (n.owner !== owner) return;
      // an agent's card where the agent is declared; other nodes (fork, join, hooks) first
      var place = agents[n.id] && n.kind === "agent" ? declared[n.id] : -1 + i / (drawing.nodes.length + 1);
      out.push({ type: "node", id: n.id, place: place });
    });
    drawing.agents.forEach(function (a) { if (a.boxed && a.parent === owner) out.push({ type: "box", id: a.id, place: declared[a.id] }); });
    // branches, routes and an agent's tools side by side in the order they are declared
    return out.sort(function (x, y) { return x.place - y.place; });
  }
  function boxChain(nodeId) {  // boxes holding a node, innermost first
    var chain = [], owner = nodes[nodeId] ? nodes[nodeId].owner : null;
    while (owner !== null && owner !== undefined) { chain.push(owner); owner = agents[owner].parent; }
    return chain;
  }
  function visible(nodeId) {  // the drawn block standing for a node: itself, or its outermost collapsed box
    var chain = boxChain(nodeId), rep = nodeId;
    for (var i = 0; i < chain.length; i++) { if (collapsed[chain[i]]) rep = "box:" + chain[i]; }
    return rep;
  }
  function memberFor(owner, nodeId) {  // which member of `owner`'s box holds a node (null: none)
    if (nodes[nodeId] && nodes[nodeId].owner === owner) return "node:" + nodeId;
    var chain = boxChain(nodeId);
    for (var i = 0; i < chain.length; i++) {
      if (agents[chain[i]].parent === owner && agents[chain[i]].boxed) return "box:" + chain[i];
    }
    return null;
  }

  function commonBox(a, b) {  // innermost box holding both nodes (null: the top level)
    var ca = boxChain(a), cb = boxChain(b);
    for (var i = 0; i < ca.length; i++) { if (cb.indexOf(ca[i]) >= 0) return ca[i]; }
    return null;
  }
  function labelWidth(label) {
    var w = 0;
    label.split("\n").forEach(function (l) { w = Math.max(w, textWidth(l, 10)); });
    return w;
  }
  // a loop's back edge runs up a gutter on the right of the box that holds both its ends, with
  // its label beside it: the box is laid out wider by that gutter
  var gutters = {};
  drawing.edges.forEach(function (e) {
    if (e.kind !== "loop") return;
    var box = commonBox(e.source, e.target) || "__top__";
    gutters[box] = Math.max(gutters[box] || 0, labelWidth(e.label) + 2 * GUTTER_GAP);
  });

  var toolLabels = {};  // agent used as a tool -> width of its tool edge's label
  drawing.agents.forEach(function (t) {
    if (!t.tool_of) return;
    drawing.edges.forEach(function (e) {
      if (e.kind === "tool" && e.target === t.entry) toolLabels[t.id] = labelWidth(e.label) + 12;
    });
  });

  // -- layout ------------------------------------------------------------------------------------
  function nodeSize(n) {
    var lines = labelOf(n), size = n.kind === "xray" || n.kind === "hook" ? 10 : 12;
    var w = 0;
    lines.forEach(function (l) { w = Math.max(w, textWidth(l, size)); });
    var h = lines.length * LINE + 2 * 6;
    if (n.kind === "decision") { return { w: w * 1.5 + 30, h: h * 1.6 }; }
    return { w: Math.max(w + 2 * PAD, 40), h: h };
  }
  function labelOf(n) {
    var lines = n.label.split("\n");
    if (n.kind === "agent" && agents[n.id] && agents[n.id].run) lines.push(runLine(agents[n.id].run));
    return lines;
  }
  function boxTitle(a) {
    var lines = [(collapsed[a.id] ? "▸ " : "▾ ") + a.label];
    if (a.run) lines.push(runLine(a.run));
    return lines;
  }
  function layoutBox(agentId) {  // returns {w, h, items:[{key, x, y, w, h, ...}]} relative to the box
    var a = agents[agentId], title = a ? boxTitle(a) : [];
    var titleW = 0;
    title.forEach(function (l) { titleW = Math.max(titleW, textWidth(l, 12, true) + 24); });
    if (a && collapsed[agentId]) {
      return { w: titleW + 2 * PAD, h: title.length * LINE + 16, collapsed: true, title: title, items: [] };
    }
    var members = membersOf(agentId === "__top__" ? null : agentId);
    var sized = {}, order = [];
    members.forEach(function (m) {
      var key = m.type + ":" + m.id;
      order.push(key);
      if (m.type === "node") { var s = nodeSize(nodes[m.id]); sized[key] = { key: key, type: "node", id: m.id, w: s.w, h: s.h }; }
      else { var b = layoutBox(m.id); b.key = key; b.type = "box"; b.id = m.id; sized[key] = b; }
    });
    // layering edges between members (back edges of loops do not rank)
    var succ = {};
    order.forEach(function (k) { succ[k] = []; });
    var owner = agentId === "__top__" ? null : agentId;
    drawing.edges.forEach(function (e) {
      if (e.kind === "loop" || e.kind === "data" || e.kind === "tool") return;
      // LangGraph's edges order its nodes inside one agent; the agents are ordered by their flow
      if (e.kind === "xray" && nodes[e.source].owner !== nodes[e.target].owner) return;
      var s = memberFor(owner, e.source), t = memberFor(owner, e.target);
      if (s && t && s !== t && succ[s] && succ[t] && succ[s].indexOf(t) < 0) succ[s].push(t);
    });
    var layer = {}, state = {};
    function visit(k) {  // longest path from sources; edges closing a cycle are ignored
      if (state[k] === 2) return layer[k];
      state[k] = 1;
      var best = 0;
      order.forEach(function (p) {
        if (succ[p].indexOf(k) >= 0 && state[p] !== 1) best = Math.max(best, visit(p) + 1);
      });
      state[k] = 2; layer[k] = best;
      return best;
    }
    order.forEach(visit);
    drawing.agents.forEach(function (t) {  // an agent used as a tool: on its caller's row
      if (!t.tool_of) return;
      var s = memberFor(owner, agents[t.tool_of].anchor), k = memberFor(owner, t.entry);
      if (s && k && s !== k && layer[s] !== undefined && layer[k] !== undefined) layer[k] = layer[s];
    });
    var rows = [];
    order.forEach(function (k) { (rows[layer[k]] = rows[layer[k]] || []).push(k); });
    rows = rows.filter(function (r) { return r && r.length; });
    var gutter = gutters[agentId] || 0;
    function gapBefore(k) {  // room for the label of the tool edge into an agent beside its caller
      var id = k.slice(k.indexOf(":") + 1);
      return agents[id] && agents[id].tool_of ? Math.max(GAP_X, toolLabels[id] || 0) : GAP_X;
    }
    var width = titleW + 2 * PAD, y = (a ? TITLE + (title.length - 1) * LINE : 0) + PAD, rowDims = [];
    rows.forEach(function (r) {
      var w = 0, h = 0;
      r.forEach(function (k, i) { w += sized[k].w + (i ? gapBefore(k) : 0); h = Math.max(h, sized[k].h); });
      rowDims.push({ w: w, h: h });
      width = Math.max(width, w + 2 * PAD + gutter);
    });
    var items = [];
    rows.forEach(function (r, ri) {
      var x = (width - gutter - rowDims[ri].w) / 2;
      r.forEach(function (k, i) {
        var it = sized[k];
        if (i) x += gapBefore(k);
        it.x = x; it.y = y + (rowDims[ri].h - it.h) / 2;
        x += it.w;
        items.push(it);
      });
      y += rowDims[ri].h + GAP_Y;
    });
    return { w: width, h: y - GAP_Y + PAD, title: title, items: items, gutter: gutter };
  }

  // -- drawing -----------------------------------------------------------------------------------
  var viewport = document.getElementById("gf-viewport");
  var rects = {};  // drawn block key -> absolute rect
  function statusStyle(run, shape) {
    if (!run) return;
    shape.style.fill = COLORS[run.status][0];
    shape.style.stroke = COLORS[run.status][1];
  }
  function drawText(g, lines, cx, top, size, anchor) {
    lines.forEach(function (l, i) {
      var t = el("text", { x: cx, y: top + (i + 1) * LINE - 3, "font-size": size, "text-anchor": anchor || "middle" }, g);
      t.textContent = l;
    });
  }
  function drawNode(parent, it, ox, oy) {
    var n = nodes[it.id], x = ox + it.x, y = oy + it.y;
    var agent = n.kind === "agent" ? agents[n.id] : null;
    var cls = "gf-node gf-" + n.kind + (agent && agent.kind === "function" ? " gf-function" : "");
    var g = el("g", { "class": cls, "data-node": n.id, "data-agent": agent ? agent.id : null }, parent);
    var shape;
    if (n.kind === "decision") {
      var cx = x + it.w / 2, cy = y + it.h / 2;
      shape = el("polygon", { points: [cx, y, x + it.w, cy, cx, y + it.h, x, cy].join(" ") }, g);
      shape.style.fill = "#fffde7";
    } else {
      shape = el("rect", { x: x, y: y, width: it.w, height: it.h }, g);
    }
    if (agent) statusStyle(agent.run, shape);
    var lines = labelOf(n), size = n.kind === "xray" || n.kind === "hook" ? 10 : 12;
    drawText(g, lines, x + it.w / 2, y + (it.h - lines.length * LINE) / 2, size);
    var owner = agent ? agent.id : (n.owner || null);
    if (owner) g.addEventListener("click", function (ev) { ev.stopPropagation(); select(owner); });
    rects["node:" + n.id] = { x: x, y: y, w: it.w, h: it.h };
  }
  function drawBox(parent, agentId, layout, ox, oy) {
    var a = agents[agentId];
    var g = el("g", { "class": "gf-box" + (layout.collapsed ? " gf-collapsed" : ""), "data-agent": agentId, "data-kind": a.kind }, parent);
    var rect = el("rect", { "class": "gf-frame", x: ox, y: oy, width: layout.w, height: layout.h, "data-agent": agentId }, frames);
    statusStyle(a.run, rect);
    if (a.run) rect.style.fillOpacity = "0.35";
    var title = el("g", { "class": "gf-title" }, g);
    drawText(title, layout.title, ox + PAD, oy + 4, 12, "start");
    title.addEventListener("click", function (ev) { ev.stopPropagation(); select(agentId); });
    var toggle = el("rect", { "class": "gf-toggle", x: ox + 4, y: oy + 4, width: 16, height: 16, "data-toggle": agentId }, g);
    toggle.addEventListener("click", function (ev) { ev.stopPropagation(); collapsed[agentId] = !collapsed[agentId]; render(); });
    rects["box:" + agentId] = { x: ox, y: oy, w: layout.w, h: layout.h, gutter: layout.gutter };
    layout.items.forEach(function (it) {
      if (it.type === "node") drawNode(g, it, ox, oy);
      else drawBox(g, it.id, it, ox + it.x, oy + it.y);
    });
  }
  function drawLabel(layer, label, x, y, kind) {
    label.split("\n").forEach(function (l, i) {
      var t = el("text", { x: x, y: y + i * 12, "class": "gf-edge-label", "text-anchor": "start", "data-edge": kind }, layer);
      t.textContent = l;
    });
  }
  function drawEdges(layer, labels) {
    var seen = {}, pairs = {};
    drawing.edges.forEach(function (e) {
      var s = visible(e.source), t = visible(e.target);
      var sk = s.indexOf("box:") === 0 ? s : "node:" + s, tk = t.indexOf("box:") === 0 ? t : "node:" + t;
      var self = sk === tk && e.kind === "loop" && sk.indexOf("node:") === 0;  // a one-agent loop
      if ((sk === tk && !self) || !rects[sk] || !rects[tk]) return;
      var dup = sk + ">" + tk + ">" + e.kind + ">" + e.label;
      if (seen[dup]) return;
      seen[dup] = true;
      var nth = pairs[sk + ">" + tk] = (pairs[sk + ">" + tk] || 0) + 1;  // labels of parallel edges stack
      var a = rects[sk], b = rects[tk], d, lx, ly;
      var x1 = a.x + a.w / 2, y1 = a.y + a.h, x2 = b.x + b.w / 2, y2 = b.y;
      var holder = e.kind === "loop" ? rects["box:" + (commonBox(e.source, e.target) || "")] : null;
      if (holder && holder.gutter) {  // a loop: right, up the holding box's gutter, back in
        x1 = a.x + a.w; y1 = a.y + a.h / 2; x2 = b.x + b.w; y2 = b.y + b.h / 2;
        if (self) { y1 = a.y + a.h * 0.7; y2 = a.y + a.h * 0.3; }
        var lane = holder.x + holder.w - holder.gutter + GUTTER_GAP, r = Math.min(8, Math.abs(y1 - y2) / 2);
        d = "M" + x1 + "," + y1 + " H" + (lane - r) + " Q" + lane + "," + y1 + " " + lane + "," + (y1 - r) +
          " V" + (y2 + r) + " Q" + lane + "," + y2 + " " + (lane - r) + "," + y2 + " H" + x2;
        lx = lane + 5; ly = (y1 + y2) / 2 - 6 * (e.label.split("\n").length - 1);
      } else if (e.kind !== "loop" && a.y < b.y + b.h && b.y < a.y + a.h && (b.x >= a.x + a.w || a.x >= b.x + b.w)) {
        // side by side (an agent and the agent it uses as a tool): straight across
        var right = b.x >= a.x + a.w;
        x1 = right ? a.x + a.w : a.x; y1 = a.y + a.h / 2; x2 = right ? b.x : b.x + b.w; y2 = b.y + b.h / 2;
        d = "M" + x1 + "," + y1 + " L" + x2 + "," + y2;
        lx = Math.min(x1, x2) + 2; ly = Math.min(y1, y2) - 4 - 12 * (nth - 1);
      } else if (e.kind === "loop" || y2 < y1 - 1) {  // other back edges: around the right side
        x1 = a.x + a.w; y1 = a.y + a.h / 2; x2 = b.x + b.w; y2 = b.y + b.h / 2;
        var bend = Math.max(x1, x2) + 40;
        d = "M" + x1 + "," + y1 + " C" + bend + "," + y1 + " " + bend + "," + y2 + " " + x2 + "," + y2;
        lx = 0.75 * bend + 0.25 * Math.max(x1, x2) + 5; ly = (y1 + y2) / 2;
      } else {
        var my = (y1 + y2) / 2;
        d = "M" + x1 + "," + y1 + " C" + x1 + "," + my + " " + x2 + "," + my + " " + x2 + "," + y2;
        // a route's label near its decision, clear of the box it leads into
        var at = e.kind === "route" || e.kind === "fallback" ? y1 + (y2 - y1) * 0.35 : my;
        lx = (x1 + x2) / 2 + 4; ly = at + (nth - 1) * 12 * e.label.split("\n").length;
      }
      el("path", { d: d, "class": "gf-edge gf-" + e.kind + " gf-" + e.style, "marker-end": "url(#gf-arrow)", "data-edge": e.kind }, layer);
      if (e.label) drawLabel(labels, e.label, lx, ly, e.kind);
    });
  }
  var view = { x: 20, y: 20, k: 1 }, lastSize = null, frames = null;
  function apply() { viewport.setAttribute("transform", "translate(" + view.x + "," + view.y + ") scale(" + view.k + ")"); }
  function render() {
    while (viewport.firstChild) viewport.removeChild(viewport.firstChild);
    rects = {};
    var top = layoutBox("__top__");
    // layers, bottom up: the boxes' frames, the edges, the cards and titles (so that a card
    // hides an edge passing behind it), the edges' labels
    frames = el("g", { id: "gf-frames" }, viewport);
    var edges = el("g", { id: "gf-edges" }, viewport);
    var boxes = el("g", { id: "gf-boxes" }, viewport);
    top.items.forEach(function (it) {
      if (it.type === "node") drawNode(boxes, it, 0, 0);
      else drawBox(boxes, it.id, it, it.x, it.y);
    });
    drawEdges(edges, el("g", { id: "gf-edge-labels" }, viewport));
    lastSize = { w: top.w, h: top.h };
    if (selected) mark(selected);
    apply();
  }
  function fit() {
    var svg = document.getElementById("gf-canvas"), box = svg.getBoundingClientRect();
    if (!lastSize || !box.width) return;
    var bb = viewport.getBBox();  // what is drawn, edge labels included (untransformed)
    view.k = Math.min((box.width - 40) / bb.width, (box.height - 40) / bb.height, 1.5);
    view.x = (box.width - bb.width * view.k) / 2 - bb.x * view.k;
    view.y = 20 - bb.y * view.k;
    apply();
  }

  // -- side panel --------------------------------------------------------------------------------
  function mark(agentId) {
    Array.prototype.forEach.call(document.querySelectorAll(".gf-selected"), function (e) { e.classList.remove("gf-selected"); });
    Array.prototype.forEach.call(document.querySelectorAll('[data-agent="' + agentId + '"]'), function (e) { e.classList.add("gf-selected"); });
  }
  function add(dl, term, value) {
    if (value === undefined || value === null || value === "" || (Array.isArray(value) && !value.length)) return;
    var dt = document.createElement("dt"); dt.textContent = term; dl.appendChild(dt);
    var dd = document.createElement("dd");
    if (value instanceof Node) dd.appendChild(value); else dd.textContent = String(value);
    dl.appendChild(dd);
  }
  function pre(text) { var p = document.createElement("pre"); p.textContent = text; return p; }
  function list(items) {
    var ul = document.createElement("ul");
    items.forEach(function (i) { var li = document.createElement("li"); li.textContent = i; ul.appendChild(li); });
    return ul;
  }
  function select(agentId) {
    selected = agentId;
    mark(agentId);
    var a = agents[agentId], d = a.details || {}, panel = document.getElementById("gf-panel");
    panel.textContent = "";
    var h = document.createElement("h2"); h.textContent = a.name; panel.appendChild(h);
    var k = document.createElement("div"); k.className = "gf-kind"; k.textContent = a.kind + (a.tool_of ? " · tool of " + agents[a.tool_of].name : ""); panel.appendChild(k);
    var dl = document.createElement("dl"); dl.id = "gf-details"; panel.appendChild(dl);
    add(dl, "kind", a.kind);
    add(dl, "description", a.description);
    if (a.run) add(dl, "run", runLine(a.run));
    add(dl, "instruction", d.instruction !== undefined ? pre(d.instruction) : undefined);
    add(dl, "reads", (d.reads || []).map(function (r) { return "{" + r.key + (r.optional ? "?" : "") + "}"; }).join(", "));
    add(dl, "output_key", d.output_key);
    add(dl, "tools", d.tools && d.tools.length ? list(d.tools) : undefined);
    add(dl, "hooks", d.hooks && d.hooks.length ? list(d.hooks.map(function (x) { return x.name + " (" + x.kinds.join(", ") + ")"; })) : undefined);
    var shown = { instruction: 1, reads: 1, output_key: 1, tools: 1, hooks: 1 };
    if (d.routes) {
      add(dl, "routes", list(d.routes.map(function (r) { return r.name + (r.description ? ": " + r.description : ""); })));
      shown.routes = 1;
    }
    Object.keys(d).forEach(function (key) {
      if (shown[key]) return;
      var v = d[key];
      add(dl, key, typeof v === "object" && v !== null ? JSON.stringify(v) : v);
    });
  }

  // -- pan and zoom ------------------------------------------------------------------------------
  var svg = document.getElementById("gf-canvas"), drag = null;
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = svg.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
    var f = ev.deltaY < 0 ? 1.15 : 1 / 1.15, k = Math.max(0.1, Math.min(6, view.k * f));
    view.x = px - (px - view.x) * (k / view.k); view.y = py - (py - view.y) * (k / view.k); view.k = k;
    apply();
  }, { passive: false });
  svg.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX - view.x, y: ev.clientY - view.y, moved: false }; svg.classList.add("gf-dragging"); });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    view.x = ev.clientX - drag.x; view.y = ev.clientY - drag.y; drag.moved = true; apply();
  });
  window.addEventListener("mouseup", function () { drag = null; svg.classList.remove("gf-dragging"); });

  document.getElementById("gf-title").textContent = drawing.root + (drawing.options.thread_id ? " · run " + drawing.options.thread_id : "");
  document.getElementById("gf-fit").addEventListener("click", fit);
  document.getElementById("gf-expand").addEventListener("click", function () { collapsed = {}; render(); fit(); });
  document.getElementById("gf-collapse").addEventListener("click", function () {
    drawing.agents.forEach(function (a) { if (a.boxed && a.id !== drawing.root) collapsed[a.id] = true; });
    render(); fit();
  });
  var legend = document.getElementById("gf-legend");
  if (drawing.options.thread_id) {
    Object.keys(COLORS).forEach(function (s) {
      var span = document.createElement("span"); span.textContent = MARKS[s];
      span.style.background = COLORS[s][0]; span.style.borderColor = COLORS[s][1]; legend.appendChild(span);
    });
  }
  render();
  fit();
  window.graphflowViewer = { drawing: drawing, select: select, collapse: function (id, v) { collapsed[id] = v !== false; render(); } };
})();
