"""TARGETs: `file.py:attr`, `package.module:attr` or a spec file, loaded into an agent."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphflow.cli._errors import CliError

if TYPE_CHECKING:
    from graphflow.agents.base import Agent

__all__ = ("TARGET_KEY", "absolute", "load_agent", "recorded")

TARGET_KEY = "graphflow_target"
"""Checkpoint metadata key under which a CLI run records its target."""
_SPEC_SUFFIXES = (".yaml", ".yml", ".json")


def _import_file(where: str, target: str) -> Any:
    path = Path(where).resolve()
    if not path.is_file():
        raise CliError(f"no file {where} (target {target!r})")
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise CliError(f"cannot import {where} (target {target!r})")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def load_agent(target: str) -> Agent:
    """The agent a TARGET names: `file.py:attr`, `module:attr`, or a spec file."""
    from graphflow.agents.base import Agent
    from graphflow.exceptions import GraphflowError

    if target.endswith(_SPEC_SUFFIXES):
        from graphflow.spec import load_spec

        return load_spec(target)
    where, _, attr = target.rpartition(":")
    if not where or not attr:
        raise CliError(
            f"target {target!r} should look like app.py:team, mypkg.module:team or team.yaml"
        )
    try:
        if where.endswith(".py") or os.sep in where:
            module = _import_file(where, target)
        else:
            try:
                module = importlib.import_module(where)
            except ImportError as exc:
                raise CliError(
                    f"cannot import module {where!r} (target {target!r}): {exc}"
                ) from exc
    except (CliError, GraphflowError):
        raise
    except SystemExit as exc:
        # a module that ends the program when imported is not a target (and exit 0 would lie)
        raise CliError(
            f"importing {where} called sys.exit({exc.code!r}); a target module must define its "
            'agent without exiting (put the script part under `if __name__ == "__main__":`)'
        ) from None
    except Exception as exc:
        raise CliError(f"importing {where} failed: {type(exc).__name__}: {exc}") from exc
    if not hasattr(module, attr):
        names = sorted(n for n, v in vars(module).items() if isinstance(v, Agent))
        raise CliError(
            f"{where} has no attribute {attr!r}; its agents: {', '.join(names) or 'none'}"
        )
    agent = getattr(module, attr)
    if not isinstance(agent, Agent):
        raise CliError(f"{target} is {type(agent).__name__}, not a graphflow Agent")
    return agent


def absolute(target: str) -> str:
    """`target` with its file made absolute (it is recorded, and read from any folder)."""
    where, sep, attr = target.rpartition(":")
    if target.endswith(_SPEC_SUFFIXES):
        return str(Path(target).resolve())
    if where.endswith(".py") or os.sep in where:
        return f"{Path(where).resolve()}{sep}{attr}"
    return target


def recorded(target: str, agent: Agent) -> Any:
    """The run config that records `target` and the root agent in the checkpoints."""
    from graphflow.checkpoint.stored import AGENT_KEY

    return {"metadata": {TARGET_KEY: absolute(target), AGENT_KEY: agent.name}}
