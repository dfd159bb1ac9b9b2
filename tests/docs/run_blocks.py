"""Run docs code as a reader would: each job in a fresh process, a fresh directory, a new script.

    python -m tests.docs.run_blocks < jobs.json > results.json

`jobs.json` is a list of `{"id": ..., "blocks": [[label, code], ...]}`; a job's blocks run in
order as one `__main__` module. The runner imports the libraries once, then forks a child per job
(the child's state is the freshly imported one, never an earlier job's), so a block that passes
passes in a new `python script.py` too. Prints a list of `{"id", "ok", "error", "output"}`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
import types
from pathlib import Path

JOB_TIMEOUT = 300.0
"""Seconds a job may take before it is killed and reported (a block waiting forever)."""


def _warm() -> None:
    """Import what nearly every block imports, once, before any fork."""
    import langchain_core.messages  # noqa: F401
    import langgraph.graph  # noqa: F401

    import graphflow._public  # noqa: F401  (the names `import graphflow` loads on first use)
    import graphflow.testing  # noqa: F401

    if threading.active_count() != 1:  # a fork copies no threads: a block would find them dead
        raise RuntimeError(f"threads after import: {threading.enumerate()}")


def _child(blocks: list[list[str]], workdir: str, output: str, error: str) -> None:
    os.chdir(workdir)
    sys.path.insert(0, workdir)
    fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    module = types.ModuleType("__main__")
    module.__file__ = os.path.join(workdir, "script.py")
    sys.modules["__main__"] = module
    try:
        for label, code in blocks:
            exec(compile(code, label, "exec", dont_inherit=True), module.__dict__)
    except BaseException:
        Path(error).write_text(traceback.format_exc())
        sys.stdout.flush()
        os._exit(1)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _run(job: dict, root: Path) -> dict:
    workdir = tempfile.mkdtemp(prefix="job-", dir=root)
    output, error = os.path.join(root, f"{id(job)}.out"), os.path.join(root, f"{id(job)}.err")
    pid = os.fork()
    if pid == 0:
        try:
            _child(job["blocks"], workdir, output, error)
        finally:
            os._exit(2)
    deadline = time.monotonic() + JOB_TIMEOUT
    status = None
    while status is None:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(raw)
        elif time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = f"killed after {JOB_TIMEOUT:.0f} s"
        else:
            time.sleep(0.02)
    text = Path(output).read_text(errors="replace") if os.path.exists(output) else ""
    failure = Path(error).read_text() if os.path.exists(error) else ""
    if status != 0 and not failure:
        failure = f"the process ended with {status}"
    return {"id": job["id"], "ok": status == 0, "error": failure, "output": text[-4000:]}


def main() -> None:
    jobs = json.load(sys.stdin)
    _warm()
    with tempfile.TemporaryDirectory(prefix="docs-blocks-") as root:
        results = [_run(job, Path(root)) for job in jobs]
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
