"""The seed article's competitive-analysis team, on a bundled corpus of product notes.

A researcher (ReactAgent with `web_search` over `notes/*.md`) → LoopAgent(writer, reviewer) until
the reviewer answers APPROVE or 3 passes → a Markdown report in `reports/<product>.md`. Offline on
scripted demo models whose replies are built from the notes; with OPENAI_API_KEY on a real model.

    python examples/competitive_analysis.py "Huawei Pura X"      # the entry file: run.py's main
    graphflow run examples/competitive_analysis.py:pipeline "Pixel 9 Pro Fold"

Modules: `corpus` (the notes and their search), `demo_models`, `team` (`build()`), `report`,
`run` (the command line).
"""

from .team import Team, build, models, models_notice, web_search

_team = build()
pipeline = _team.pipeline
researcher, refine, writer, reviewer = _team.researcher, _team.refine, _team.writer, _team.reviewer
research_model, writer_model, reviewer_model = (
    _team.research_model,
    _team.writer_model,
    _team.reviewer_model,
)

__all__ = (
    "Team",
    "build",
    "models",
    "models_notice",
    "pipeline",
    "refine",
    "research_model",
    "researcher",
    "reviewer",
    "reviewer_model",
    "web_search",
    "writer",
    "writer_model",
)
