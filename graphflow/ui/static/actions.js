// graphflow ui, acting on a run (run page): each paused tool call (HumanApproval) to approve,
// edit or reject, and which of Resume / Stop apply — none while another process holds the run.
// Loaded before app.js; `act(path, body)` posts to the run's API and shows its error.
"use strict";

function approvalBox(intr, act) {
  const v = intr.value || {};
  const tool = v.type === "tool_approval";
  const shown = tool ? `${v.agent} wants to call ${v.tool}(${JSON.stringify(v.args)})` : JSON.stringify(v);
  const answer = (body) => act("/approve", Object.assign({ id: intr.id }, body));
  const reason = el("input", { placeholder: "reason (for reject)", class: "reason" });
  const args = el("textarea", { class: "edit-args", rows: 4, cols: 60, hidden: "" });
  args.value = JSON.stringify(v.args || {}, null, 2);
  const error = el("span", { class: "error edit-error" });
  const runEdited = el("button", { class: "edit-run", hidden: "", onclick: () => {
    let parsed;
    try { parsed = JSON.parse(args.value); } catch (err) { error.textContent = "not JSON: " + err.message; return; }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      error.textContent = "the arguments must be a JSON object";
      return;
    }
    error.textContent = "";
    answer({ decision: "edit", args: parsed });
  } }, "Run with these arguments");
  const edit = tool ? el("button", { class: "edit", onclick: () => {
    args.hidden = !args.hidden;
    runEdited.hidden = args.hidden;
  } }, "Edit arguments…") : null;
  return el("div", { class: "approval", "data-interrupt": intr.id },
    el("div", {}, "Approval needed: ", el("code", {}, shown)),
    v.description ? el("div", { class: "muted" }, v.description) : null,
    el("button", { class: "approve", onclick: () => answer({ decision: "approve" }) }, "Approve"), " ",
    edit, edit ? " " : null,
    el("button", { class: "reject", onclick: () => answer({ decision: "reject", reason: reason.value }) }, "Reject"), " ",
    reason,
    el("div", {}, args, " ", runEdited, " ", error));
}

function showActions(run) {
  const owner = run.owner;
  const note = document.getElementById("owner");
  note.textContent = owner
    ? `Running in ${owner.text}: another process holds this run, so it cannot be resumed, stopped or answered here.`
    : "";
  const resume = document.getElementById("resume");
  const stop = document.getElementById("stop");
  resume.hidden = !owner && (run.live || !["failed", "crashed", "stopped"].includes(run.status));
  stop.hidden = !owner && !run.live;
  for (const button of [resume, stop]) {
    button.disabled = Boolean(owner);
    button.title = owner ? "running in " + owner.text : "";
  }
}
