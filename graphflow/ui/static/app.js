// graphflow ui: builds the pages from the JSON API. Data is only ever set with textContent.
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function statusBadge(status) {
  return el("span", { class: "status status-" + status, "data-status": status }, status);
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function runUrl(thread) { return "/runs/" + encodeURIComponent(thread); }
function apiRun(thread) { return "/api/run/" + encodeURIComponent(thread); }
function short(text) { return text ? String(text).slice(0, 19).replace("T", " ") : ""; }

// -- runs page -----------------------------------------------------------------------------------

function runsPage() {
  let offset = 0;
  const limit = 25;
  let filled = false;
  const status = document.getElementById("filter-status");
  const text = document.getElementById("filter-text");

  let asked = 0;
  async function load() {
    const q = new URLSearchParams({ offset, limit, status: status.value, q: text.value });
    const mine = ++asked;
    const data = await api("/api/runs?" + q);
    if (mine !== asked) return; // a newer filter was asked for meanwhile: its answer wins
    document.getElementById("store").textContent = data.store;
    if (!filled) {
      filled = true;
      for (const s of data.statuses) status.append(el("option", { value: s }, s));
      const select = document.getElementById("start-target");
      for (const t of data.targets) select.append(el("option", { value: t }, t));
    }
    const body = document.querySelector("#runs tbody");
    body.replaceChildren(...data.runs.map((r) => el("tr", { class: "clickable run-row", "data-thread": r.thread_id, onclick: () => { location.href = runUrl(r.thread_id); } },
      el("td", {}, el("a", { href: runUrl(r.thread_id) }, r.thread_id)),
      el("td", {}, r.target || "?"),
      el("td", {}, statusBadge(r.status)),
      el("td", {}, r.agent || ""),
      el("td", {}, r.step ?? ""),
      el("td", {}, short(r.updated_at)),
    )));
    document.getElementById("page").textContent = data.runs.length
      ? `${offset + 1}–${offset + data.runs.length} of ${data.total} threads` : "no runs";
    document.getElementById("prev").disabled = offset === 0;
    document.getElementById("next").disabled = !data.more;
  }

  status.addEventListener("change", () => { offset = 0; load(); });
  text.addEventListener("input", () => { offset = 0; load(); });
  document.getElementById("prev").addEventListener("click", () => { offset = Math.max(0, offset - limit); load(); });
  document.getElementById("next").addEventListener("click", () => { offset += limit; load(); });
  document.getElementById("start-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const error = document.getElementById("start-error");
    error.textContent = "";
    try {
      const data = await api("/api/runs", {
        target: document.getElementById("start-target").value,
        input: document.getElementById("start-input").value,
        thread_id: document.getElementById("start-thread").value,
      });
      location.href = runUrl(data.thread_id);
    } catch (err) { error.textContent = err.message; }
  });
  load();
  setInterval(() => { if (!document.hidden) load(); }, 3000);
}

// -- run page ------------------------------------------------------------------------------------

function runPage() {
  const thread = decodeURIComponent(location.pathname.slice("/runs/".length));
  const base = apiRun(thread);
  document.getElementById("thread").textContent = thread;
  let lastCheckpoint = null;
  let selectedAgent = null;

  function act(path, body) {
    const error = document.getElementById("action-error");
    error.textContent = "";
    return api(base + path, body).then((data) => {
      if (data.thread_id && data.thread_id !== thread) location.href = runUrl(data.thread_id);
      return data;
    }).catch((err) => { error.textContent = err.message; });
  }

  function render(run) {
    document.getElementById("store").textContent = run.store;
    const badge = document.getElementById("status");
    badge.textContent = run.status;
    badge.className = "status status-" + run.status;
    badge.dataset.status = run.status;
    document.getElementById("meta").textContent =
      `target ${run.target} · last agent ${run.agent || "-"} · step ${run.step ?? "-"} · updated ${short(run.updated_at)}`;
    document.getElementById("error").textContent = run.error || "";
    document.getElementById("hint").textContent = run.hint || "";
    document.getElementById("resume").hidden = !["failed", "crashed"].includes(run.status) || run.live;
    document.getElementById("stop").hidden = !run.live;
    const body = document.querySelector("#agents tbody");
    body.replaceChildren(...run.agents.map((a) => el("tr", { class: "clickable agent-row", "data-agent": a.name, onclick: () => showAgent(a.name) },
      el("td", { style: `padding-left:${8 + 16 * a.depth}px` }, a.name),
      el("td", {}, a.kind),
      el("td", {}, statusBadge(a.status)),
      el("td", {}, a.model_calls ?? ""),
      el("td", {}, a.tool_calls ?? ""),
      el("td", {}, a.loop_passes ?? ""),
    )));
    const approvals = document.getElementById("approvals");
    approvals.replaceChildren(...run.approvals.map((intr) => approvalBox(intr)));
    if (run.checkpoint_id !== lastCheckpoint) {
      lastCheckpoint = run.checkpoint_id;
      if (run.checkpoint_id) {
        document.getElementById("drawing").src = base + "/drawing.svg?c=" + encodeURIComponent(run.checkpoint_id);
        loadHistory();
        if (selectedAgent) showAgent(selectedAgent);
      }
    }
  }

  function approvalBox(intr) {
    const v = intr.value || {};
    const shown = v.type === "tool_approval"
      ? `${v.agent} wants to call ${v.tool}(${JSON.stringify(v.args)})` : JSON.stringify(v);
    const reason = el("input", { placeholder: "reason (for reject)", class: "reason" });
    return el("div", { class: "approval" },
      el("div", {}, "Approval needed: ", el("code", {}, shown)),
      v.description ? el("div", { class: "muted" }, v.description) : null,
      el("button", { class: "approve", onclick: () => act("/approve", { decision: "approve" }) }, "Approve"), " ",
      el("button", { class: "reject", onclick: () => act("/approve", { decision: "reject", reason: reason.value }) }, "Reject"), " ",
      reason);
  }

  async function showAgent(name) {
    selectedAgent = name;
    const box = document.getElementById("agent-detail");
    try {
      const a = await api(base + "/agents/" + encodeURIComponent(name));
      const parts = [el("h3", {}, "Agent ", el("span", { id: "agent-name" }, a.name))];
      if (a.description) parts.push(el("p", { class: "muted" }, a.description));
      if (a.output_key) parts.push(el("p", {}, "wrote ", el("code", {}, a.output_key), ":"), el("pre", { class: "output" }, JSON.stringify(a.output, null, 2)));
      for (const m of a.messages) {
        let text = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
        if (m.tool_calls) text += (text ? "\n" : "") + m.tool_calls.map((c) => `→ ${c.name}(${JSON.stringify(c.args)})`).join("\n");
        parts.push(el("div", { class: "message" }, el("b", {}, m.type + ": "), text));
      }
      if (!a.messages.length && !a.output_key) parts.push(el("p", { class: "muted" }, "no messages or output in the state"));
      box.replaceChildren(...parts);
    } catch (err) { box.replaceChildren(el("p", { class: "error" }, err.message)); }
  }

  async function loadHistory() {
    const data = await api(base + "/history").catch(() => ({ checkpoints: [] }));
    const list = document.getElementById("history");
    list.replaceChildren(...data.checkpoints.map((c) => el("li", { class: "checkpoint", "data-checkpoint": c.checkpoint_id, "data-step": c.step, onclick: () => showCheckpoint(c.checkpoint_id) },
      `step ${c.step} · ${c.source} · next: ${c.next.join(", ") || "-"} · ${short(c.created_at)}`)));
  }

  async function showCheckpoint(id) {
    const box = document.getElementById("checkpoint");
    const c = await api(base + "/checkpoints/" + encodeURIComponent(id));
    const values = el("textarea", { id: "fork-values", rows: 6, cols: 60 });
    values.value = "{}";
    const newThread = el("input", { id: "fork-thread", placeholder: "new thread (optional)" });
    box.replaceChildren(
      el("h3", {}, `State at step ${c.step}`),
      el("p", { class: "muted" }, "next: " + (c.next.join(", ") || "-")),
      el("pre", { id: "checkpoint-values" }, JSON.stringify(c.values, null, 2)),
      el("p", {}, "Fork from here into a new thread, with these values changed (JSON):"),
      values, el("br"), newThread, " ",
      el("button", { id: "fork", onclick: () => {
        let parsed;
        try { parsed = JSON.parse(values.value || "{}"); } catch (err) { document.getElementById("action-error").textContent = "not JSON: " + err.message; return; }
        act("/fork", { checkpoint_id: id, values: parsed, thread_id: newThread.value });
      } }, "Fork"));
  }

  document.getElementById("resume").addEventListener("click", () => act("/resume", {}));
  document.getElementById("stop").addEventListener("click", () => act("/stop", {}));
  const events = document.getElementById("events");
  const source = new EventSource(base + "/events");
  source.addEventListener("run", (e) => {
    const run = JSON.parse(e.data);
    document.dispatchEvent(new CustomEvent("graphflow:run", { detail: run })); // run.js
    render(run);
  });
  source.addEventListener("event", (e) => {
    const ev = JSON.parse(e.data);
    document.dispatchEvent(new CustomEvent("graphflow:event", { detail: ev })); // run.js
    if (ev.type === "ModelToken") return;
    events.append(el("li", { "data-ts": ev.timestamp }, `${ev.type} ${(ev.agent_path || []).join(" › ")}`));
    while (events.children.length > 200) events.firstChild.remove();
  });
  source.onerror = () => {};
}

if (document.body.dataset.page === "runs") runsPage();
else runPage();
