"""`graphflow run | resume | approve`: run or continue an agent, showing it live."""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from graphflow._internal.approval import APPROVE, EDIT, REJECT, approval_answer, is_approval_request
from graphflow._internal.commands import password_note, resume_command, run_command, store_words
from graphflow.cli._errors import DONE, INTERRUPTED, CliError
from graphflow.cli._foreground import follow
from graphflow.cli._kinds import result_key
from graphflow.cli._say import say
from graphflow.cli._store import check_store, stored_target
from graphflow.cli._targets import load_agent, recorded

if TYPE_CHECKING:
    from graphflow import events as ev
    from graphflow.agents.base import Agent

__all__ = ("cmd_approve", "cmd_resume", "cmd_run", "resume_line")


def resume_line(args: argparse.Namespace, thread_id: str, *extra: str) -> str:
    """The command that continues `thread_id` from here, and a note when it left a password out."""
    return resume_command(thread_id, args.checkpointer, *extra) + password_note(args.checkpointer)


def _parse_input(text: str, *, as_text: bool) -> Any:
    if not text.strip():
        raise CliError("the input is empty; pass the text to work on, or a JSON object of keys")
    _check_utf8(text, "the input")
    if not as_text and text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise CliError(
                f"the input looks like JSON but is not valid ({exc}); to pass it as plain "
                "text, add --text"
            ) from None
    return text


def _check_utf8(text: str, what: str) -> None:
    """Refuse text that arrived as bytes that are not UTF-8 (Python keeps them as surrogates,
    which a checkpoint would store as `?`: the run would go on with other text than it was given)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        byte = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise CliError(
            f"{what} is not valid UTF-8 ({byte} at character {exc.start}); pass UTF-8 text "
            "(check the encoding of the terminal or of the file it came from)"
        ) from None


def _outputs(agent: Agent, state: Any) -> dict[str, Any]:
    """What the agents wrote, in tree order (the whole public state when they wrote nothing)."""
    values = dict(state)
    keys = [result_key(a) for a in agent.walk()]
    shown = {k: values[k] for k in keys if k and k in values}
    return shown or {
        k: v
        for k, v in values.items()
        if k not in ("messages", "agent_status") and not str(k).startswith("gf_")
    }


def _print_outputs(agent: Agent, state: Any, *, readable: bool) -> None:
    """The outputs: one JSON object, or on a terminal each key over its text as written."""
    shown = _outputs(agent, state)
    if not readable:
        print(json.dumps(shown, indent=2, ensure_ascii=False, default=str))
        return
    for key, value in shown.items():
        text = value if isinstance(value, str) else json.dumps(value, indent=2, default=str)
        print(f"\n── {key} ──\n{text}")


def _announce(args: argparse.Namespace, thread_id: str) -> None:
    """Name the thread once the run has a checkpoint (something a resume can continue)."""
    if args.command == "run" and not args.announced:
        say(f"thread {thread_id} (resume with: {resume_line(args, thread_id)})")
    args.announced = True


def _watch(
    agent: Agent, events: Iterator[ev.Event], args: argparse.Namespace, thread_id: str
) -> int:
    """Show a run's events; the exit code."""
    from graphflow import events as ev
    from graphflow.cli._view import make_view

    view = make_view(agent, json_lines=args.json, plain=args.plain)
    args.view = view
    last: ev.Event | None = None
    try:
        for event in follow(events):
            if isinstance(event, ev.AgentStarted):
                _announce(args, thread_id)  # its input checkpoint is written
                args.where = "/".join(event.agent_path)
            view.show(event)
            last = event
    finally:
        view.close()
    if isinstance(last, ev.Interrupted):
        answers = [p.get("value") for p in last.pending]
        say(f"waiting for an answer: {json.dumps(answers, default=str, ensure_ascii=False)}")
        approve = run_command("approve", thread_id, *store_words(args.checkpointer))
        say(f"answer with: {approve}  or  {resume_line(args, thread_id, '--answer', 'JSON')}")
        return INTERRUPTED
    if isinstance(last, ev.RunFinished) and not args.json:
        _print_outputs(agent, last.state, readable=view.on_terminal)
    return DONE


def _stream(args: argparse.Namespace, agent: Agent, data: Any, thread_id: str, target: str) -> int:
    """Run or continue `agent` on the thread, recording `target`; show it; the exit code."""
    events = agent.stream(
        data,
        thread_id=thread_id,
        checkpointer=args.checkpointer,
        config=recorded(target, agent),
        events=True,
    )
    return _watch(agent, events, args, thread_id)


def cmd_run(args: argparse.Namespace) -> int:
    """`graphflow run TARGET INPUT`."""
    if args.thread_id is not None and not args.thread_id.strip():
        raise CliError(
            f"--thread-id {args.thread_id!r} cannot name a run; give a name, or leave the option "
            "out for a new thread"
        )
    if args.thread_id is not None:
        from graphflow.exceptions import InputError
        from graphflow.runtime.inputs import check_thread_id

        try:  # (the API's rule: length, valid Unicode, no control characters)
            check_thread_id(args.thread_id)
        except InputError as exc:
            raise CliError(str(exc).replace("thread_id ", "--thread-id ", 1)) from None
    data = _parse_input(args.input, as_text=args.text)
    args.phase = "loading the target"
    agent = load_agent(args.target)
    args.phase = "opening the store"
    agent.compile(checkpointer=args.checkpointer)  # a store that cannot work fails first
    args.phase = "starting the run"
    thread_id = args.thread_id or f"run-{uuid.uuid4().hex[:8]}"
    args.run_thread = thread_id
    return _stream(args, agent, data, thread_id, args.target)


def _target_and_thread(args: argparse.Namespace) -> tuple[Agent, str]:
    args.phase = "reading the store"
    if args.thread_id is None:
        thread_id = args.target
        target = stored_target(args.checkpointer, thread_id, args.command)
    else:
        target, thread_id = args.target, args.thread_id
        check_store(args.checkpointer)
    args.run_thread = thread_id
    args.announced = True  # the thread exists: a stop can always be resumed
    args.loaded_from = target
    args.phase = "loading the target"
    agent = load_agent(target)
    args.phase = "continuing the run"
    return agent, thread_id


def _resume(args: argparse.Namespace, agent: Agent, thread_id: str, answer: Any) -> int:
    from langgraph.types import Command

    data: Command | None = None if answer is None else Command(resume=answer)
    return _stream(args, agent, data, thread_id, args.loaded_from)


def cmd_resume(args: argparse.Namespace) -> int:
    """`graphflow resume [TARGET] THREAD [--answer JSON]`."""
    answer = None
    if args.answer is not None:
        try:
            answer = json.loads(args.answer)
        except json.JSONDecodeError as exc:
            raise CliError(f"--answer is not valid JSON: {exc}") from None
    agent, thread_id = _target_and_thread(args)
    return _resume(args, agent, thread_id, answer)


def cmd_approve(args: argparse.Namespace) -> int:
    """`graphflow approve [TARGET] THREAD`: answer the pending approvals, then continue."""
    agent, thread_id = _target_and_thread(args)
    snapshot = agent.get_state(thread_id, checkpointer=args.checkpointer)
    pending = list(snapshot.interrupts or ())
    if not pending:
        raise CliError(f"thread {thread_id!r} is not waiting for an approval")
    answers: dict[str, Any] = {}
    for intr in pending:
        value = getattr(intr, "value", intr)
        answers[intr.id] = _ask(value, args.decision)
    answer = next(iter(answers.values())) if len(answers) == 1 else answers
    return _resume(args, agent, thread_id, answer)


def _ask(value: Any, decision: str | None) -> dict[str, Any]:
    if is_approval_request(value):
        shown = f"{value.get('agent')} wants to call {value.get('tool')}({json.dumps(value.get('args'), default=str)})"
    else:
        shown = json.dumps(value, default=str, ensure_ascii=False)
    print(f"approval needed: {shown}", file=sys.stderr)
    if decision is None:
        print("approve, reject or edit? [a/r/e] ", end="", file=sys.stderr, flush=True)
        reply = sys.stdin.readline().strip().lower()
        decision = _SHORT.get(reply, reply)
    if decision == REJECT:
        print("reason: ", end="", file=sys.stderr, flush=True)
        return approval_answer(REJECT, reason=sys.stdin.readline().strip() or "rejected")
    if decision == EDIT:
        print("new arguments (JSON): ", end="", file=sys.stderr, flush=True)
        try:
            edited = json.loads(sys.stdin.readline())
        except json.JSONDecodeError as exc:
            raise CliError(f"the edited arguments are not valid JSON: {exc}") from None
        return approval_answer(EDIT, args=edited)
    if decision != APPROVE:
        raise CliError(f"unknown decision {decision!r}; answer a (approve), r (reject) or e (edit)")
    return approval_answer(APPROVE)


_SHORT = {"": APPROVE, **{word[0]: word for word in (APPROVE, REJECT, EDIT)}}
"""A reply at the prompt: its first letter (nothing: approve)."""
