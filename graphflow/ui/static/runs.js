// graphflow ui, runs page (/): one page of runs from /api/runs, newest first. Loaded before
// app.js, whose helpers (el, api, statusBadge, runUrl, short) it uses when runsPage() is called.
"use strict";

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "";
  if (seconds < 10) return seconds.toFixed(2) + " s";
  if (seconds < 60) return seconds.toFixed(1) + " s";
  const s = Math.round(seconds);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

function count(n) { return n === null || n === undefined ? "–" : n.toLocaleString("en"); }

function runRow(r) {
  const status = el("td", { class: "status-cell" }, statusBadge(r.status));
  if (r.owner) status.append(" ", el("span", { class: "owner muted" }, "in " + r.owner.text));
  const row = el("tr", { class: "clickable run-row", "data-thread": r.thread_id, onclick: () => { location.href = runUrl(r.thread_id); } },
    el("td", {}, el("a", { href: runUrl(r.thread_id) }, r.thread_id)),
    el("td", {}, r.target || "?"),
    status,
    el("td", {}, r.agent || ""),
    el("td", { class: "started" }, short(r.started_at)),
    el("td", { class: "duration num" }, duration(r.duration_s)),
    el("td", { class: "model-calls num" }, count(r.model_calls)),
    el("td", { class: "tokens num" }, count(r.tokens)),
  );
  const why = r.error || r.hint;
  if (why) row.title = why;
  return row;
}

function runsPage() {
  const limit = 25;
  const starts = [0]; // where each page shown so far starts in the thread list (for "newer")
  let next = null;
  let filled = false;
  const status = document.getElementById("filter-status");
  const text = document.getElementById("filter-text");

  let asked = 0;
  async function load() {
    const offset = starts[starts.length - 1];
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
    document.querySelector("#runs tbody").replaceChildren(...data.runs.map(runRow));
    next = data.next_offset;
    const seen = `threads ${data.total ? offset + 1 : 0}–${next ?? data.total} of ${data.total}`;
    const filtered = status.value || text.value.trim();
    document.getElementById("page").textContent = filtered
      ? `${data.runs.length} matching in ${seen}` : (data.runs.length ? seen : "no runs");
    document.getElementById("prev").disabled = starts.length === 1;
    document.getElementById("next").disabled = next === null;
  }

  function restart() { starts.length = 1; load(); }
  status.addEventListener("change", restart);
  text.addEventListener("input", restart);
  document.getElementById("prev").addEventListener("click", () => { if (starts.length > 1) starts.pop(); load(); });
  document.getElementById("next").addEventListener("click", () => { if (next !== null) { starts.push(next); load(); } });
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
