"""Several processes opening one new PostgreSQL store at once all succeed (setup takes turns)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
OPEN = "import sys; from graphflow.checkpoint import resolve_checkpointer; resolve_checkpointer(sys.argv[1]); print('ok')"


@pytest.fixture
def fresh_database() -> str:
    url = os.environ.get("GRAPHFLOW_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("GRAPHFLOW_TEST_POSTGRES_URL is not set in CI (source .ci/postgres.sh)")
        pytest.skip("GRAPHFLOW_TEST_POSTGRES_URL is not set")
    import psycopg

    name = f"gf_setup_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_six_processes_set_up_one_new_store_together(fresh_database: str) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN, fresh_database],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(6)
    ]
    outcomes = [p.communicate(timeout=300) for p in procs]
    failed = [err for p, (_, err) in zip(procs, outcomes, strict=True) if p.returncode != 0]
    assert failed == []
    assert all(out.strip() == "ok" for out, _ in outcomes)
