"""The README's main job: the competitive-analysis example, run as a newcomer runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from examples.competitive_analysis import build, web_search
from examples.competitive_analysis.corpus import load_notes, search_notes
from examples.competitive_analysis.run import main

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "examples" / "competitive_analysis.py"


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GRAPHFLOW_CHECKPOINTER", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_search_finds_each_product_by_name_or_alias() -> None:
    assert [n.product for n in search_notes("Pura X")] == ["Huawei Pura X"]
    assert [n.product for n in search_notes("galaxy flip6")] == ["Samsung Galaxy Z Flip6"]
    assert search_notes("Nokia 3310") == []
    assert len(load_notes()) == 4
    text = web_search.invoke({"query": "Pixel 9 Pro Fold"})
    assert "Tensor G4" in text and "- competitor:" in text


def test_different_products_give_different_reports(offline: Path) -> None:
    reports = {}
    team = build()
    for product in ("Huawei Pura X", "Xiaomi 15 Ultra"):
        team.writer_model.reset()
        assert main(team, [product]) == 0
        reports[product] = (
            offline / "reports" / f"{product.lower().replace(' ', '-')}.md"
        ).read_text()
        assert team.writer_model.calls == 2  # the reviewer approves the second draft
    pura, xiaomi = reports["Huawei Pura X"], reports["Xiaomi 15 Ultra"]
    assert "4720 mAh" in pura and "4720 mAh" not in xiaomi
    assert "200 MP periscope" in xiaomi and "## Competitors" in xiaomi
    assert "approved by the reviewer" in pura and "```mermaid" in pura
    assert (offline / "runs.db").exists()


def test_unknown_product_runs_three_passes_and_says_so(offline: Path) -> None:
    team = build()
    assert main(team, ["Nokia 3310"]) == 0
    report = (offline / "reports" / "nokia-3310.md").read_text()
    assert "no product notes" in report and "not approved (loop: max_iterations)" in report
    assert team.writer_model.calls == 3 and team.reviewer_model.calls == 3


def test_each_run_is_a_new_thread_listed_in_the_store(offline: Path, capsys) -> None:
    team = build()
    assert main(team, ["Pura X"]) == 0
    assert main(team, ["Pura X"]) == 0
    out = capsys.readouterr().out
    threads = [line.split()[1] for line in out.splitlines() if line.startswith("thread ")]
    assert len(set(threads)) == 2 and all(t.startswith("analysis-pura-x-") for t in threads)
    runs = {r.thread_id: r.status for r in team.pipeline.runs(checkpointer="sqlite:///runs.db")}
    assert runs == dict.fromkeys(threads, "done")


def test_a_failed_run_resumes_without_repeating_the_research(offline: Path, capsys) -> None:
    team = build()

    def broken(messages, n):
        raise RuntimeError("writer model down")

    good = team.writer_model.fn
    team.writer_model.fn = broken
    assert main(team, ["Pura X"]) == 1
    err = capsys.readouterr().err
    assert "writer model down" in err and "--resume analysis-pura-x-" in err
    thread = err.split("--resume ")[-1].split()[0]
    team.writer_model.fn = good
    assert main(team, ["--resume", thread]) == 0
    assert team.research_model.calls == 2  # searched and summarised once, not again
    assert (offline / "reports" / "pura-x.md").exists()


def test_the_cli_lists_and_draws_the_run(offline: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = subprocess.run(
        [sys.executable, str(ENTRY), "Huawei Pura X"],
        cwd=offline,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    thread = done.stdout.split()[1]
    assert f"report: reports{os.sep}huawei-pura-x.md" in done.stdout
    graphflow = Path(sys.executable).parent / "graphflow"
    runs = subprocess.run(
        [str(graphflow), "runs"], cwd=offline, env=env, capture_output=True, text=True, timeout=60
    )
    assert runs.returncode == 0, runs.stderr
    row = next(line for line in runs.stdout.splitlines() if line.startswith(thread))
    assert row.split()[1:3] == ["competitive_analysis", "done"]
    drawn = subprocess.run(
        [str(graphflow), "draw", f"{ENTRY}:pipeline", "-f", "ascii", "--thread", thread],
        cwd=offline,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stdout.startswith("competitive_analysis · sequential")


def test_killed_run_resumes_in_a_new_process(offline: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    proc = subprocess.Popen(
        [sys.executable, str(ENTRY), "Huawei Pura X", "--delay", "0.5"],
        cwd=offline,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("[refine/writer] started (pass 1)"):
            proc.kill()
            break
    proc.wait(timeout=30)
    thread = lines[0].split()[1]
    resumed = subprocess.run(
        [sys.executable, str(ENTRY), "--resume", thread],
        cwd=offline,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "web_search(" not in resumed.stdout  # the search is not repeated
    assert (offline / "reports" / "huawei-pura-x.md").exists()
