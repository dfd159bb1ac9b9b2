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

// -- runs page: runs.js (runsPage) -------------------------------------------------------------

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
    showActions(run); // actions.js
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
    approvals.replaceChildren(...run.approvals.map((intr) => approvalBox(intr, act))); // actions.js
    if (run.checkpoint_id !== lastCheckpoint) {
      lastCheckpoint = run.checkpoint_id;
      if (run.checkpoint_id) {
        document.getElementById("drawing").src = base + "/drawing.svg?c=" + encodeURIComponent(run.checkpoint_id);
        loadHistory();
        if (selectedAgent) showAgent(selectedAgent);
      }
    }
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
