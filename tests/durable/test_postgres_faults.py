"""Issue 9, PostgreSQL faults: the server dies while a model call is in flight.

Each test starts its own throw-away PostgreSQL (initdb + pg_ctl on a free port, as
.ci/postgres.sh does) and kills it with `pg_ctl stop -m immediate` mid-run: the run fails with
one clear `CheckpointStoreError` naming the store; after a restart `resume` finishes the run and
the calls that completed before the kill are not repeated.
"""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphflow import FunctionAgent, ReactAgent, SequentialAgent
from graphflow.exceptions import CheckpointStoreError, RunStateError
from graphflow.testing import ScriptedChatModel

pytestmark = pytest.mark.postgres
WAIT = 60.0


def _bindir() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    return Path(dirs[-1]) if dirs and Path(dirs[-1], "initdb").exists() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PrivatePostgres:
    """A PostgreSQL server of one test, which the test may kill and restart."""

    bindir: Path
    root: Path
    port: int

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _as_owner(self, *args: str) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if os.geteuid() == 0:  # initdb and postgres refuse to run as root
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    def init(self) -> None:
        done = self._as_owner(
            "initdb", "-D", str(self.root / "data"), "-U", "postgres", "-A", "trust", "--no-sync"
        )
        assert done.returncode == 0, done.stdout + done.stderr

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.root / 'sock'} -c listen_addresses=127.0.0.1 -c fsync=off"
        )
        done = self._as_owner(
            "pg_ctl", "-D", str(self.root / "data"), "-l", str(self.root / "server.log"),
            "-o", options, "-w", "-t", "60", "start",
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr + self.log()

    def kill(self) -> None:
        """Stop at once, as a crash would: no shutdown checkpoint, connections cut."""
        self._as_owner("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")

    def log(self) -> str:
        path = self.root / "server.log"
        return path.read_text() if path.exists() else ""


@pytest.fixture
def postgres() -> Iterator[PrivatePostgres]:
    bindir = _bindir()
    if bindir is None:
        why = "no PostgreSQL server binaries (initdb); install the postgresql package"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(why)  # CI installs it (.ci/postgres.sh): a missing server is a failure
        pytest.skip(why)
    pytest.importorskip("psycopg")
    # a folder the postgres user can reach (pytest's tmp_path is private to root)
    root = Path(tempfile.mkdtemp(prefix="graphflow-faults-pg-"))
    root.chmod(0o755)
    (root / "data").mkdir()
    (root / "sock").mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        for sub in ("data", "sock"):
            shutil.chown(root / sub, "postgres")
    server = PrivatePostgres(bindir=bindir, root=root, port=_free_port())
    try:
        server.init()
        server.start()
        yield server
    finally:
        server.kill()
        shutil.rmtree(root, ignore_errors=True)


class InFlight:
    """A model whose first call stops in flight until the test lets it go on."""

    def __init__(self) -> None:
        self.called = threading.Event()
        self.go_on = threading.Event()
        self.model = ScriptedChatModel(fn=self._reply)

    def _reply(self, messages, n: int) -> str:
        if n == 0:
            self.called.set()
            assert self.go_on.wait(WAIT)
        return f"draft {n}"


def _team(calls, model) -> SequentialAgent:
    return SequentialAgent(
        name="team",
        sub_agents=[
            FunctionAgent(name="prep", fn=calls.step("prep"), output_key="notes"),
            ReactAgent(
                name="writer", model=model, instruction="Write {notes}.", output_key="draft"
            ),
            FunctionAgent(name="publish", fn=calls.step("publish"), output_key="published"),
        ],
    )


@pytest.mark.parametrize(
    ("mode", "resume_with"),
    [
        ("sync", "the same agent"),
        ("sync", "a new process's agent"),
        ("async", "the same agent"),
    ],
)
def test_postgres_killed_mid_run_is_one_clear_error_and_resume_loses_nothing(
    postgres: PrivatePostgres, monkeypatch: pytest.MonkeyPatch, calls, mode: str, resume_with: str
) -> None:
    monkeypatch.setenv("GRAPHFLOW_PG_CONNECT_TIMEOUT", "3")
    url = postgres.url
    flight = InFlight()
    team = _team(calls, flight.model)
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        try:
            if mode == "sync":
                team.invoke("pumps", thread_id="pg-kill", checkpointer=url)
            else:  # (the async saver and pool; the model blocks its loop while in flight)
                asyncio.run(team.ainvoke("pumps", thread_id="pg-kill", checkpointer=url))
        except BaseException as exc:  # noqa: BLE001 - examined below
            outcome["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    try:
        assert flight.called.wait(WAIT), "the model was never called"
        postgres.kill()  # the store dies while the model call is in flight
    finally:
        flight.go_on.set()
        worker.join(WAIT)
    assert not worker.is_alive()
    error = outcome.get("error")
    assert isinstance(error, CheckpointStoreError), repr(error)
    message = str(error)
    assert error.store == url and f"checkpoint store {url} failed" in message
    assert "thread 'pg-kill'" in message and "agent.resume('pg-kill')" in message
    assert "checkpoints written before are kept" in message and "\n" not in message
    assert (calls["prep"], flight.model.calls, calls["publish"]) == (1, 1, 0)

    postgres.start()
    again = team if resume_with == "the same agent" else _team(calls, flight.model)
    if mode == "sync":
        state = again.resume("pg-kill", checkpointer=url)
    else:
        state = asyncio.run(again.aresume("pg-kill", checkpointer=url))
    assert (state["notes"], state["draft"], state["published"]) == ("PREP", "draft 1", "PUBLISH")
    # prep had finished before the kill: not repeated; the call in flight is made again
    assert (calls["prep"], flight.model.calls, calls["publish"]) == (1, 2, 1)
    [info] = again.runs(checkpointer=url)
    assert info.thread_id == "pg-kill" and info.status == "done"


def test_postgres_down_before_a_resume_is_one_clear_error(
    postgres: PrivatePostgres, monkeypatch: pytest.MonkeyPatch, calls
) -> None:
    monkeypatch.setenv("GRAPHFLOW_PG_CONNECT_TIMEOUT", "2")
    url = postgres.url
    team = _team(calls, ScriptedChatModel(fn=lambda m, n: f"draft {n}"))
    team.invoke("pumps", thread_id="first", checkpointer=url)
    postgres.kill()
    fresh = _team(calls, ScriptedChatModel(fn=lambda m, n: "x"))
    with pytest.raises(CheckpointStoreError) as caught:
        fresh.runs(checkpointer=url)
    assert "PostgreSQL cannot be reached" in str(caught.value) and "\n" not in str(caught.value)
    postgres.start()
    assert fresh.get_state("first", checkpointer=url).values["published"] == "PUBLISH"


def test_savers_passed_as_instances_share_the_lease_in_the_database(
    postgres: PrivatePostgres, calls
) -> None:
    """Two workers with their own saver objects (a pool, a connection) on one database: the
    second run on a busy thread is refused, as it is for two processes given the URL."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    from graphflow.exceptions import ThreadBusyError

    # (trust authentication ignores the password: it is there to be kept out of messages)
    url = postgres.url.replace("postgres@", "postgres:s3cret@")
    options: dict = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    pool = ConnectionPool(url, kwargs=options, open=True)
    conn = psycopg.connect(url, **options)
    try:
        first_saver, second_saver = PostgresSaver(pool), PostgresSaver(conn)  # type: ignore[arg-type]
        first_saver.setup()
        started, release = threading.Event(), threading.Event()

        def slow(state):
            calls.hit("slow")
            started.set()
            assert release.wait(WAIT)
            return "SLOW"

        def team() -> SequentialAgent:
            return SequentialAgent(
                name="team", sub_agents=[FunctionAgent(name="slow", fn=slow, output_key="out")]
            )

        outcome: dict[str, object] = {}
        worker = threading.Thread(
            target=lambda: outcome.update(
                state=team().invoke("first", thread_id="shared", checkpointer=first_saver)
            )
        )
        worker.start()
        try:
            assert started.wait(WAIT)
            with pytest.raises(ThreadBusyError) as caught:
                team().invoke("second", thread_id="shared", checkpointer=second_saver)
            # the lease is a row in the database, where a process given the URL looks too
            with psycopg.connect(postgres.url) as check:
                row = check.execute(
                    "SELECT host, pid FROM graphflow_leases WHERE thread_id = 'shared'"
                ).fetchone()
            assert row == (socket.gethostname(), os.getpid())
        finally:
            release.set()
            worker.join(WAIT)
        assert caught.value.thread_id == "shared" and calls["slow"] == 1
        assert outcome["state"]["out"] == "SLOW"  # type: ignore[index]
        # a URL with a password never shows it in an error
        with pytest.raises(RunStateError) as missing:
            team().get_state("ghost", checkpointer=url)
        assert "s3cret" not in str(missing.value) and "postgres:***@" in str(missing.value)
    finally:
        pool.close()
        conn.close()
