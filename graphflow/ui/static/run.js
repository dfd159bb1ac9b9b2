// graphflow ui, run page: the timeline of agent invocations, the agent panel (what one
// invocation was sent, answered, called and wrote; tokens as they stream), the clickable
// drawing and the difference of two checkpoints. Data is only ever set with textContent;
// app.js passes on the run's server-sent events as `graphflow:event` / `graphflow:run`.
"use strict";

(function () {
  if (document.body.dataset.page !== "run") return;
  const thread = decodeURIComponent(location.pathname.slice("/runs/".length));
  const base = "/api/run/" + encodeURIComponent(thread);

  // el (elements with text only), api (the JSON API) and statusBadge come from app.js
  const h = el;
  const get = (path) => api(base + path);
  const badge = statusBadge;

  function json(value) { return typeof value === "string" ? value : JSON.stringify(value, null, 2); }
  function seconds(s) { return s === null || s === undefined ? "" : s.toFixed(2) + " s"; }
  function where(inv) {
    const parts = [];
    if (inv.iteration !== null && inv.iteration !== undefined) parts.push("pass " + (inv.iteration + 1));
    if (inv.branch) parts.push("branch " + inv.branch);
    return parts.join(" · ");
  }
  function sameRun(a, b) {
    return JSON.stringify(a.path) === JSON.stringify(b.agent_path || b.path)
      && (a.branch ?? null) === (b.branch ?? null) && (a.iteration ?? null) === (b.iteration ?? null);
  }

  // -- the timeline --------------------------------------------------------------------------------

  let invocations = [];
  let selected = null; // the invocation shown in the panel

  async function loadTimeline() {
    let data;
    try { data = await get("/timeline"); } catch (err) { return; }
    invocations = data.invocations;
    const t0 = Math.min(...invocations.map((i) => i.start ?? Infinity));
    const now = Date.now() / 1000;
    const t1 = Math.max(...invocations.map((i) => i.end ?? now), t0 + 0.001);
    const body = document.querySelector("#timeline tbody");
    body.replaceChildren(...invocations.map((inv) => {
      const bar = h("div", { class: "bar status-" + inv.status });
      const left = ((inv.start ?? t0) - t0) / (t1 - t0);
      const width = Math.max(((inv.end ?? now) - (inv.start ?? t0)) / (t1 - t0), 0.005);
      bar.style.marginLeft = (100 * left).toFixed(2) + "%";
      bar.style.width = (100 * Math.min(width, 1 - left)).toFixed(2) + "%";
      const name = h("td", { class: "inv-name" }, inv.agent, where(inv) ? h("span", { class: "muted" }, " " + where(inv)) : null);
      name.style.paddingLeft = (8 + 14 * (inv.path.length - 1)) + "px";
      const tokens = inv.tokens.input + inv.tokens.output;
      return h("tr", {
        class: "clickable invocation", "data-id": inv.id, "data-of": inv.agent,
        "data-iteration": inv.iteration ?? "", "data-branch": inv.branch ?? "",
        onclick: () => showInvocation(inv.id),
      },
      name, h("td", {}, badge(inv.status)),
      h("td", {}, inv.start !== null ? "+" + seconds(inv.start - t0) : ""),
      h("td", {}, inv.end !== null && inv.start !== null ? seconds(inv.end - inv.start) : ""),
      h("td", {}, inv.model_calls ?? ""), h("td", {}, inv.tool_calls ?? ""),
      h("td", { title: inv.tokens.unknown ? inv.tokens.unknown + " replies without usage" : "" },
        tokens || (inv.tokens.unknown ? "?" : "")),
      h("td", { class: "bar-cell" }, bar));
    }));
    if (selected && !invocations.some((i) => i.id === selected.id)) {
      const twin = invocations.filter((i) => sameRun(selected, i)).pop();
      if (twin) showInvocation(twin.id);
    }
  }

  let timer = null;
  function soon() { // at most one timeline read in flight per 300 ms
    if (timer) return;
    timer = setTimeout(() => { timer = null; loadTimeline(); }, 300);
  }

  // -- the agent panel -----------------------------------------------------------------------------

  async function showInvocation(id) {
    const box = document.getElementById("invocation");
    let d;
    try { d = await get("/invocations/" + encodeURIComponent(id)); } catch (err) {
      if (selected && selected.id === id) { // the run moved on (its rows now read from the store)
        await loadTimeline();
        const twin = invocations.filter((i) => sameRun(selected, i)).pop();
        if (twin && twin.id !== id) { showInvocation(twin.id); return; }
      }
      box.replaceChildren(h("p", { class: "error" }, err.message));
      return;
    }
    selected = d.invocation;
    const inv = d.invocation;
    const parts = [
      h("h3", {}, "Agent ", h("span", { id: "inv-agent" }, inv.path.join(" › ")), " ", badge(inv.status)),
      h("p", { class: "muted" }, [inv.kind, where(inv), inv.model_calls !== null ? `${inv.model_calls} model calls` : "",
        inv.tool_calls !== null ? `${inv.tool_calls} tool calls` : "", `${inv.tokens.input} in / ${inv.tokens.output} out tokens`]
        .filter(Boolean).join(" · ")),
    ];
    if (d.description) parts.push(h("p", { class: "muted" }, d.description));
    if (d.instruction) parts.push(h("h4", {}, "Instruction (as rendered)"), h("pre", { id: "inv-instruction" }, d.instruction));
    const sent = (d.messages || []).filter((m) => m.role === "handed");
    if (sent.length) {
      parts.push(h("h4", {}, `Handed ${sent.length} message${sent.length === 1 ? "" : "s"}`),
        h("details", {}, h("summary", {}, "show"), ...sent.map(message)));
    }
    const own = (d.messages || []).filter((m) => m.role === "own");
    if (own.length) parts.push(h("h4", {}, "Its conversation"), ...own.map(message));
    const streamed = h("pre", { id: "inv-stream", class: "stream" });
    for (const call of d.model_calls || []) streamed.append(document.createTextNode((streamed.textContent ? "\n— next call —\n" : "") + call.text));
    if (d.source === "events") parts.push(h("h4", {}, "Model output (streamed)"), streamed);
    if (d.answer) parts.push(h("h4", {}, "Answer"), h("pre", { id: "inv-answer" }, json(d.answer)));
    const calls = d.tool_calls || [];
    const list = h("div", { id: "inv-tools" }, ...calls.map(toolCall));
    if (calls.length || d.source === "events") parts.push(h("h4", {}, "Tool calls"), list);
    const writes = Object.entries(d.writes || {});
    if (writes.length) {
      parts.push(h("h4", {}, "Wrote"), h("dl", { id: "inv-writes" },
        ...writes.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, h("pre", {}, json(v)))])));
    }
    parts.push(...context(d));
    box.replaceChildren(...parts);
    box.dataset.id = inv.id;
    box.dataset.agent = inv.agent;
  }

  function long(text) { // a long text folded: its start, and the whole on demand
    if (text.length <= LONG) return text;
    return h("details", {}, h("summary", {}, text.slice(0, 200) + ` … (${text.length} characters)`), h("pre", {}, text));
  }
  const LONG = 600;

  function message(m) {
    let text = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
    if (m.tool_calls) text += (text ? "\n" : "") + m.tool_calls.map((c) => `→ ${c.name}(${JSON.stringify(c.args)})`).join("\n");
    return h("div", { class: "message" + (m.masked ? " masked" : "") },
      h("b", {}, `${m.type}${m.name ? " (" + m.name + ")" : ""}: `), long(text));
  }

  function toolCall(c) {
    const outcome = c.error
      ? h("div", { class: "error" }, (c.error_type ? `[${c.error_type}] ` : "") + c.error)
      : c.result !== null && c.result !== undefined ? long(json(c.result)) : h("div", { class: "muted" }, c.status);
    return h("div", { class: "tool-call", "data-tool": c.name ?? "", "data-call": c.id ?? "" },
      h("code", {}, `${c.name}(${JSON.stringify(c.args)})`), " ", badge(c.status || "running"), outcome);
  }

  function context(d) {
    const out = [];
    const c = d.context;
    const events = d.context_events || [];
    if (!c && !events.length) return out;
    const box = h("div", { id: "inv-context" });
    out.push(h("h4", {}, "Context policy"), box);
    const last = c && c.last_call;
    const masked = last ? last.masked : (events.length ? events[events.length - 1].masked_results || [] : []);
    if (masked.length) {
      box.append(h("p", {}, `Masked in its last request (${masked.length}):`),
        h("ul", {}, ...masked.map((m) => h("li", { class: "masked-result", "data-obs": m.obs_id },
          `${m.tool} result ${m.obs_id} (${m.chars ?? "?"} chars) — sent as a placeholder, recallable`))));
    } else box.append(h("p", { class: "muted" }, "nothing masked in its last request"));
    if (c && c.summary) box.append(h("p", {}, `Summarised ${c.summary.rounds} tool rounds:`), h("pre", { class: "summary" }, c.summary.text));
    if (c && c.stats) {
      const s = c.stats;
      box.append(h("p", { class: "muted" }, `masking fired ${s.masking_fired || 0}× · summaries ${s.summaries || 0} · tokens saved ${s.tokens_saved || 0} · last request ${s.last_request_tokens || 0} tokens`));
    }
    return out;
  }

  function live(ev) { // a typed event: tokens and tool calls of the invocation shown
    if (!selected || selected.source !== "events" || !sameRun(selected, ev)) return;
    const stream = document.getElementById("inv-stream");
    if (ev.type === "ModelToken" && stream) stream.append(document.createTextNode(ev.text));
    else if (ev.type === "ModelStarted" && stream && stream.textContent) stream.append(document.createTextNode("\n— next call —\n"));
    else if (ev.type === "ToolCallStarted") {
      const list = document.getElementById("inv-tools");
      if (list) list.append(toolCall({ id: ev.call_id, name: ev.name, args: ev.args, status: "running", result: null }));
    } else if (ev.type === "ToolCallFinished" || ev.type === "AgentFinished" || ev.type === "AgentFailed" || ev.type === "CustomEvent") {
      showInvocation(selected.id);
    }
  }

  // -- the drawing: agents clickable --------------------------------------------------------------

  const img = document.getElementById("drawing");
  const holder = document.getElementById("drawing-svg");
  let agentNames = [];

  function safe(name) { return name.replace(/[^A-Za-z0-9_]/g, "_"); }

  async function loadDrawing() {
    if (!img.getAttribute("src")) return;
    const response = await fetch(img.getAttribute("src"));
    if (!response.ok) return;
    const doc = new DOMParser().parseFromString(await response.text(), "image/svg+xml");
    const svg = doc.documentElement;
    if (svg.nodeName !== "svg") return;
    for (const bad of svg.querySelectorAll("script, foreignObject, iframe, object, embed, style")) bad.remove();
    for (const node of [svg, ...svg.querySelectorAll("*")]) {
      for (const attr of [...node.attributes]) {
        const name = attr.name.toLowerCase();
        if (name.startsWith("on") || ((name === "href" || name === "xlink:href") && !attr.value.startsWith("#"))) node.removeAttribute(attr.name);
      }
    }
    const bySafe = new Map(agentNames.map((n) => [safe(n), n]));
    for (const g of svg.querySelectorAll("g.node, g.cluster")) {
      const title = (g.querySelector("title") || {}).textContent || "";
      const key = g.classList.contains("cluster") ? title.replace(/^cluster_c_/, "") : title.replace(/^n_/, "");
      const agent = bySafe.get(key);
      if (!agent) continue;
      g.classList.add("agent-node");
      g.setAttribute("data-agent", agent);
    }
    holder.replaceChildren(document.importNode(svg, true));
    for (const g of holder.querySelectorAll("g.agent-node")) {
      g.addEventListener("click", (e) => { e.stopPropagation(); selectAgent(g.getAttribute("data-agent")); });
    }
    img.hidden = true;
  }

  async function selectAgent(name) {
    if (!invocations.length) await loadTimeline();
    const found = invocations.filter((i) => i.agent === name);
    if (found.length) { showInvocation(found[found.length - 1].id); return; }
    document.getElementById("invocation").replaceChildren(h("h3", {}, "Agent ", h("span", { id: "inv-agent" }, name)), h("p", { class: "muted" }, "not run yet"));
  }

  new MutationObserver(() => loadDrawing()).observe(img, { attributes: true, attributeFilter: ["src"] });

  // -- the difference of two checkpoints -----------------------------------------------------------

  async function loadCheckpoints() {
    const data = await get("/history").catch(() => ({ checkpoints: [] }));
    for (const id of ["diff-a", "diff-b"]) {
      const select = document.getElementById(id);
      const was = select.value;
      select.replaceChildren(...data.checkpoints.map((c) => h("option", { value: c.checkpoint_id },
        `step ${c.step} · ${c.source} · next: ${c.next.join(", ") || "-"}`)));
      if (was && data.checkpoints.some((c) => c.checkpoint_id === was)) select.value = was;
      else if (data.checkpoints.length) select.value = data.checkpoints[id === "diff-a" ? data.checkpoints.length - 1 : 0].checkpoint_id;
    }
  }

  async function showDiff() {
    const box = document.getElementById("diff");
    const a = document.getElementById("diff-a").value;
    const b = document.getElementById("diff-b").value;
    let d;
    try { d = await get(`/diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`); } catch (err) {
      box.replaceChildren(h("p", { class: "error" }, err.message));
      return;
    }
    const parts = [h("p", { class: "muted" }, `from step ${d.a.step} to step ${d.b.step}; unchanged: ${d.same.join(", ") || "-"}`)];
    for (const x of d.added) parts.push(h("div", { class: "diff-added", "data-key": x.key }, h("b", {}, "+ " + x.key + ": "), h("pre", {}, json(x.value))));
    for (const x of d.removed) parts.push(h("div", { class: "diff-removed", "data-key": x.key }, h("b", {}, "− " + x.key + ": "), h("pre", {}, json(x.value))));
    for (const x of d.changed) {
      const row = h("div", { class: "diff-changed", "data-key": x.key }, h("b", {}, "~ " + x.key));
      if (x.messages) {
        const m = x.messages;
        row.append(h("span", { class: "muted" }, ` (${m.kept} messages kept)`));
        for (const a of m.added) row.append(h("div", { class: "diff-added" }, `+ [${a.index}] `, message(a.message)));
        for (const r of m.removed) row.append(h("div", { class: "diff-removed" }, `− [${r.index}] `, message(r.message)));
        for (const c of m.changed) row.append(h("div", { class: "diff-changed" }, `~ [${c.index}] `, message(c.before), "→", message(c.after)));
      } else if (x.keys) {
        const k = x.keys;
        for (const a of k.added) row.append(h("div", { class: "diff-added" }, `+ ${a.key}: ${JSON.stringify(a.value)}`));
        for (const r of k.removed) row.append(h("div", { class: "diff-removed" }, `− ${r.key}: ${JSON.stringify(r.value)}`));
        for (const c of k.changed) row.append(h("div", { class: "diff-changed" }, `~ ${c.key}: ${JSON.stringify(c.before)} → ${JSON.stringify(c.after)}`));
      } else {
        row.append(h("div", { class: "split" }, h("pre", { class: "before" }, json(x.before)), h("pre", { class: "after" }, json(x.after))));
      }
      parts.push(row);
    }
    if (!d.added.length && !d.removed.length && !d.changed.length) parts.push(h("p", {}, "no difference"));
    box.replaceChildren(...parts);
  }

  document.getElementById("diff-go").addEventListener("click", showDiff);

  // -- following the run ---------------------------------------------------------------------------

  let lastCheckpoint = null;
  document.addEventListener("graphflow:run", (e) => {
    const run = e.detail;
    agentNames = (run.agents || []).map((a) => a.name);
    if (run.checkpoint_id !== lastCheckpoint) {
      lastCheckpoint = run.checkpoint_id;
      loadCheckpoints();
      if (!holder.firstChild) loadDrawing();
    }
    soon();
  });
  document.addEventListener("graphflow:event", (e) => {
    const ev = e.detail;
    live(ev);
    if (["AgentStarted", "AgentFinished", "AgentFailed", "ModelFinished", "ToolCallStarted", "Interrupted", "RunFinished"].includes(ev.type)) soon();
  });
  loadTimeline();
})();
