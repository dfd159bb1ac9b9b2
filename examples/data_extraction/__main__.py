"""`python -m examples.data_extraction LOG_DIR DB [--resume THREAD]`: run the pipeline once."""

from __future__ import annotations

import argparse
import os
import uuid

from graphflow import events as ev

from .pipeline import pipeline


def main(argv: list[str] | None = None) -> int:
    """Run (or resume) the pipeline and print what each step produced."""
    parser = argparse.ArgumentParser(description="Extract orders from logs into SQLite.")
    parser.add_argument("log_dir", nargs="?", default="logs")
    parser.add_argument("db_path", nargs="?", default="orders.db")
    parser.add_argument("--resume", metavar="THREAD")
    parser.add_argument(
        "--checkpointer", default=os.environ.get("GRAPHFLOW_CHECKPOINTER", "sqlite:///runs.db")
    )
    args = parser.parse_args(argv)
    thread_id = args.resume or f"extract-{uuid.uuid4().hex[:8]}"
    print(f"thread {thread_id}")
    data = None if args.resume else {"log_dir": args.log_dir, "db_path": args.db_path}
    for event in pipeline.stream(
        data, thread_id=thread_id, checkpointer=args.checkpointer, events=ev.AgentFinished
    ):
        if len(event.agent_path) == 2:
            value = event.value
            shown = f"{len(value)} items" if isinstance(value, list) else repr(value)
            if hasattr(value, "line_pattern"):
                shown = value.line_pattern
            print(f"[{event.agent_path[-1]}] {event.output_key} = {shown}")
    stored = pipeline.get_state(thread_id, checkpointer=args.checkpointer).values["stored"]
    print(f"{stored['inserted']} new rows; {stored['rows']} rows in {args.db_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
