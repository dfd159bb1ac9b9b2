"""The example as a newcomer meets it: Ctrl-C at any moment, odd product names, demo mode."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from examples.competitive_analysis import build
from examples.competitive_analysis.report import slug
from examples.competitive_analysis.run import main, new_thread

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "examples" / "competitive_analysis.py"


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("OPENAI_API_KEY", "GRAPHFLOW_CHECKPOINTER", "DASHSCOPE_API_KEY", "OPENAI_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _env() -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "GRAPHFLOW_CHECKPOINTER")
    }
    env["PYTHONPATH"] = str(ROOT)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _interrupt(
    folder: Path, wait_for: str | None, sig: int = signal.SIGINT
) -> tuple[int, str, str]:
    proc = subprocess.Popen(
        [sys.executable, str(ENTRY), "Pixel 9 Pro Fold", "--delay", "1"],
        cwd=folder,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out = ""
    try:
        if wait_for is None:
            time.sleep(0.3)  # still importing
        else:
            for line in proc.stdout:
                out += line
                if wait_for in line:
                    break
        proc.send_signal(sig)
        out += proc.stdout.read()
        err = proc.stderr.read()
        return proc.wait(timeout=60), out, err
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize(
    ("moment", "sig"),
    [
        ("web_search(", signal.SIGINT),  # a tool call
        ("[refine/writer] started (pass 1)", signal.SIGINT),  # a model call
        ("[refine/reviewer] started (pass 1)", signal.SIGTERM),
    ],
)
def test_a_stop_mid_run_is_one_line_and_the_printed_command_resumes(
    offline: Path, moment: str, sig: int
) -> None:
    code, out, err = _interrupt(offline, moment, sig)
    assert code == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stopped in "), err
    command = lines[0].split("Resume with: ")[1]
    thread = command.split("--resume ")[1].split()[0]
    listed = subprocess.run(
        ["graphflow", "runs"], cwd=offline, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert re.search(rf"^{thread} +competitive_analysis +stopped", listed.stdout, re.M), listed
    resumed = subprocess.run(
        shlex.split(command), cwd=offline, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    if moment != "web_search(":
        # a finished step is never repeated (a call cut off in flight is run again, as it must:
        # its result was never stored)
        assert "web_search(" not in resumed.stdout
    assert "report: reports" in resumed.stdout


def test_a_stop_while_starting_announces_no_thread(offline: Path) -> None:
    code, out, err = _interrupt(offline, None)
    assert code == 130
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert "nothing to resume" in err and "thread" not in out


def test_names_stay_names_and_bounded() -> None:
    assert slug("Huawei Pura X") == "huawei-pura-x"
    assert slug("华为 Pura X") == "华为-pura-x" and slug("华为") == "华为"
    long_a, long_b = "x" * 300, "x" * 299 + "y"
    assert len(slug(long_a)) <= 48 and slug(long_a) != slug(long_b)
    assert slug("!!!") != slug("???")  # nothing readable: still two names
    assert len(new_thread("y" * 100_000)) <= 60


def test_reports_never_overwrite_another_run(offline: Path, capsys) -> None:
    team = build()
    for product in ("华为 Pura X", "华为", "x" * 300, "Pura X", "Pura X"):
        team.writer_model.reset()
        assert main(team, [product]) == 0
    reports = sorted(p.name for p in (offline / "reports").iterdir())
    assert len(reports) == 5, reports
    assert "华为-pura-x.md" in reports and "华为.md" in reports and "pura-x.md" in reports
    assert all(len(name.encode()) < 100 for name in reports)


def test_demo_mode_is_said_and_unused_keys_are_named(
    offline: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-not-read")
    team = build()
    assert main(team, ["Pura X"]) == 0
    out = capsys.readouterr().out
    assert "models: scripted demo models" in out
    assert "DASHSCOPE_API_KEY is set but not read" in out and "OPENAI_BASE_URL=" in out
    assert "sk-not-read" not in out
    report = (offline / "reports" / "pura-x.md").read_text()
    assert "*models: scripted demo models" in report
