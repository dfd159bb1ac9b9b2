"""The Ray engine on a real local two-node cluster (every node on 127.0.0.1) and PostgreSQL."""

from __future__ import annotations

import functools
import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphflow.cli._batch import load_agent_by_path
from graphflow.exceptions import InputError

REPO = Path(__file__).resolve().parents[2]

# Ray would turn 127.0.0.1 into this machine's network address when connecting; keep it on
# loopback (read when ray is imported, so set first)
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray") if not os.environ.get("CI") else __import__("ray")

APP = textwrap.dedent(
    '''
    import os
    from pathlib import Path
    from langchain_core.tools import tool
    from graphflow import ReactAgent
    from graphflow.testing import ScriptedChatModel, tool_call

    LOG = Path(os.environ["RAY_BATCH_LOG"])

    def _log(line):
        with LOG.open("a") as f:
            f.write(line + "\\n")

    @tool
    def record(product: str) -> str:
        """Record a product (a side effect that must happen once)."""
        _log("tool " + product)
        return "recorded " + product

    def reply(messages, n):
        _log("model")
        last = messages[-1]
        if getattr(last, "type", "") == "tool":
            return "done: " + last.content
        product = last.content.removeprefix("Record ").removesuffix(".")
        return tool_call("record", {"product": product})

    team = ReactAgent(name="recorder", model=ScriptedChatModel(fn=reply, latency=0.1),
                      tools=[record], instruction="Record {input}.", output_key="note")
    '''
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from ray.cluster_utils import Cluster

    log = tmp_path_factory.mktemp("ray") / "log.txt"
    os.environ["RAY_BATCH_LOG"] = str(log)  # the workers inherit it
    local = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False}
    c = Cluster(initialize_head=True, head_node_args=dict(local))
    worker = c.add_node(**local)
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    c.wait_for_nodes()
    c.log = log  # type: ignore[attr-defined]
    c.worker = worker  # type: ignore[attr-defined]
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.fixture
def app(tmp_path: Path, cluster: Any) -> Any:
    (tmp_path / "app.py").write_text(APP)
    cluster.log.write_text("")
    return functools.partial(load_agent_by_path, f"{tmp_path / 'app.py'}:team")


def _postgres() -> str:
    url = os.environ.get("GRAPHFLOW_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("GRAPHFLOW_TEST_POSTGRES_URL is not set in CI (source .ci/postgres.sh)")
        pytest.skip("GRAPHFLOW_TEST_POSTGRES_URL is not set")
    return url


def test_sqlite_or_memory_on_two_nodes_is_refused_before_anything_runs(
    app: Any, tmp_path: Path, cluster: Any
) -> None:
    from graphflow.batch.ray import ray_batch

    db = tmp_path / "runs.db"
    with pytest.raises(InputError, match="PostgreSQL"):
        ray_batch(app, ["Pura X"], checkpointer=f"sqlite:///{db}")
    with pytest.raises(InputError, match="in-memory"):
        ray_batch(app, ["Pura X"], checkpointer="memory:")
    assert not db.exists()
    assert cluster.log.read_text() == ""


def test_a_batch_survives_a_node_killed_half_way(app: Any, cluster: Any) -> None:
    from graphflow.batch.ray import ray_batch_iter

    store = _postgres()
    products = [f"product-{i}" for i in range(50)]
    batch_id = f"ray-{uuid.uuid4().hex[:8]}"
    results = []
    for result in ray_batch_iter(
        app, products, checkpointer=store, concurrency=8, batch_id=batch_id
    ):
        results.append(result)
        if len(results) == 12:
            cluster.remove_node(cluster.worker, allow_graceful=False)
    assert len(results) == 50
    assert sorted(r.status for r in results) == ["done"] * 50, [r.error for r in results if r.error]
    by_id = {r.id: r for r in results}
    assert by_id["7"].outputs["note"] == "done: recorded product-7"
    lines = cluster.log.read_text().splitlines()
    tools = [line for line in lines if line.startswith("tool ")]
    # every product recorded; a call repeats only if it was in flight when the node died
    assert sorted(set(tools)) == sorted(f"tool {p}" for p in products)
    repeated_tools = len(tools) - 50
    repeated_models = lines.count("model") - 100
    assert 0 <= repeated_models <= 8, repeated_models
    assert 0 <= repeated_tools <= 8, repeated_tools
    print(
        f"\nnode killed after 12 results: model calls repeated {repeated_models}, tools {repeated_tools}"
    )

    # the same batch again: every input is done, nothing runs
    before = len(cluster.log.read_text().splitlines())
    again = list(
        ray_batch_iter(app, products, checkpointer=store, concurrency=8, batch_id=batch_id)
    )
    assert all(r.status == "done" and r.reused for r in again)
    assert len(cluster.log.read_text().splitlines()) == before


def test_ctrl_c_of_a_ray_batch_marks_its_runs_stopped_and_the_printed_command_continues(
    tmp_path: Path, cluster: Any
) -> None:
    store = _postgres()
    # model calls of 1.5 s: the calls in flight at the signal cannot finish before they are
    # cancelled (at 0.1 s a loaded machine let every run in flight finish: none left to mark)
    (tmp_path / "app.py").write_text(APP.replace("latency=0.1", "latency=1.5"))
    products = [f"stop-{i}" for i in range(30)]
    (tmp_path / "in.txt").write_text("".join(f"{p}\n" for p in products))
    cluster.log.write_text("")
    batch_id = f"raystop-{uuid.uuid4().hex[:8]}"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphflow.cli", "batch", "app.py:team", "in.txt",
         "--out", "out.jsonl", "--checkpointer", store, "--plain", "--concurrency", "4",
         "--batch-id", batch_id, "--engine", "ray", "--ray-address", cluster.address],
        cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while cluster.log.read_text().count("model") < 12 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    stop = [line for line in err.splitlines() if line.startswith("graphflow: stopped: ")]
    assert len(stop) == 1, err
    finished = len((tmp_path / "out.jsonl").read_text().splitlines())
    assert finished < 30

    listed = subprocess.run(
        [sys.executable, "-m", "graphflow.cli", "runs", "--checkpointer", store],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    ours = [line.split() for line in listed.stdout.splitlines() if line.startswith(batch_id)]
    statuses = sorted(row[2] for row in ours)
    stopped = statuses.count("stopped")
    assert f"{stopped} in flight marked stopped" in stop[0], (stop, ours)
    assert 1 <= stopped <= 4 and set(statuses) == {"done", "stopped"}, ours
    assert statuses.count("done") >= finished

    command = stop[0].split("continue with: ", 1)[1].strip()
    words = shlex.split(command)
    assert f"--batch-id {batch_id}" in command and "--engine ray" in command
    rest = subprocess.run(
        [sys.executable, "-m", "graphflow.cli", *words[words.index("batch") :]],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert rest.returncode == 0, rest.stderr
    rows = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["done"] * 30
    assert sum(r["reused"] for r in rows) == len(statuses) - stopped
    lines = cluster.log.read_text().splitlines()
    tools = [line for line in lines if line.startswith("tool ")]
    assert sorted(set(tools)) == sorted(f"tool {p}" for p in products)
    # completed calls were kept: only calls cut off by the stop ran again
    assert len(tools) - 30 <= stopped
    assert lines.count("model") - 60 <= 2 * stopped
