"""Entry file of the competitive-analysis example (the package `competitive_analysis/` beside it).

    python examples/competitive_analysis.py "Huawei Pura X"
    graphflow run examples/competitive_analysis.py:pipeline "Huawei Pura X"
    graphflow draw examples/competitive_analysis.py:pipeline

A file, so that the command above and the CLI's `file.py:attr` targets work from any folder. It
builds its own team when loaded, so the models follow the environment at that moment
(OPENAI_API_KEY, OPENAI_BASE_URL, GRAPHFLOW_MODEL). The code is in the package.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

if __name__ == "__main__":
    # a stop while the libraries load is one line too, not a traceback from deep inside them
    for _signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_signal, signal.default_int_handler)

try:
    # the package is imported as examples.competitive_analysis: this file's own name is taken
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

    from examples.competitive_analysis import build, web_search
    from examples.competitive_analysis.run import main as _main

    team = build()
except KeyboardInterrupt:
    if __name__ != "__main__":
        raise
    print("\nstopped while starting, before the run started: nothing to resume", file=sys.stderr)
    raise SystemExit(130) from None

pipeline = team.pipeline
researcher, refine, writer, reviewer = team.researcher, team.refine, team.writer, team.reviewer
research_model, writer_model, reviewer_model = (
    team.research_model,
    team.writer_model,
    team.reviewer_model,
)

__all__ = ("pipeline", "refine", "researcher", "reviewer", "web_search", "writer")


def main(argv: list[str] | None = None) -> int:
    """Run the example's command line on this file's team."""
    return _main(team, argv)


if __name__ == "__main__":
    from graphflow.cli import exit_now

    try:
        code = main()
    except KeyboardInterrupt:  # between two of main's own steps
        code = 130
    exit_now(code)  # without waiting for a model or tool call abandoned by a stop
