"""`python -m examples.support_router MESSAGE [--decision approve|reject]`: one conversation.

A refund pauses the run for approval: you are asked (or `--decision` answers), and the run
continues from its checkpoint.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid

from .desk_team import desk_agent


def main(argv: list[str] | None = None) -> int:
    """Answer one customer message."""
    parser = argparse.ArgumentParser(description="Route a customer message.")
    parser.add_argument("message", nargs="?", default="I was charged twice for order A-1001")
    parser.add_argument("--decision", choices=["approve", "reject"], default=None)
    parser.add_argument(
        "--checkpointer", default=os.environ.get("GRAPHFLOW_CHECKPOINTER", "sqlite:///runs.db")
    )
    args = parser.parse_args(argv)
    thread_id = f"support-{uuid.uuid4().hex[:8]}"
    store = args.checkpointer
    result = desk_agent.invoke(args.message, thread_id=thread_id, checkpointer=store)
    while pending := desk_agent.get_state(thread_id, checkpointer=store).interrupts:
        ask = pending[0].value
        print(f"approval needed: {ask['agent']} wants {ask['tool']}({ask['args']})")
        decision = args.decision
        if decision is None:
            print("approve? [y/N] ", end="", flush=True)
            decision = "approve" if sys.stdin.readline().strip().lower() == "y" else "reject"
        answer = {"decision": decision}
        if decision == "reject":
            answer["reason"] = "not approved by the support lead"
        result = desk_agent.resume(thread_id, answer, checkpointer=store)
    route = next(k for k, v in result["agent_status"].items() if k != "support" and v)
    print(f"[{route}] {result['reply']}")
    print(f"thread {thread_id}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
