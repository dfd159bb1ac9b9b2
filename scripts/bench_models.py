"""Cost of graphflow's model layer per model call, as ratios (the machine is shared and noisy).

* `invoke_chat` vs `model.bind(...).invoke` (the ReAct core's call before) on a scripted model (no network): the binding, structured
  output planning and error mapping graphflow adds around each call;
* `CompatibleChatOpenAI` vs plain `ChatOpenAI` over HTTP to the local test server
  (tests/models/openai_server.py): the request shaping and stream repair.

    python scripts/bench_models.py [calls]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from graphflow.models import invoke_chat, model_call_errors, openai_model
from graphflow.testing import ScriptedChatModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "models"))
from openai_server import OpenAIServer  # noqa: E402


def _best(fn: Any, calls: int, rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def main(calls: int) -> None:
    """Print the ratios."""
    messages = [HumanMessage(content="hello there")]
    scripted = ScriptedChatModel(fn=lambda m, n: "ok")
    # what the ReAct core did before: bind the settings, invoke
    raw = _best(lambda: scripted.bind(temperature=0).invoke(messages), calls)

    def wrapped() -> None:
        with model_call_errors(agent="a", model=scripted):
            invoke_chat(scripted, messages, settings={"temperature": 0})

    ours = _best(wrapped, calls)
    print(
        f"scripted: bind+invoke {raw * 1e6:.0f} us, invoke_chat {ours * 1e6:.0f} us, ratio {ours / raw:.2f}"
    )
    with OpenAIServer("openai_strict") as server:
        plain = ChatOpenAI(model="m", base_url=server.base_url, api_key="x")
        compat = openai_model("m", base_url=server.base_url, api_key="x")
        n = max(20, calls // 20)
        for label, fn in (("invoke", "invoke"), ("stream", "stream")):

            def run(model: Any, how: str = fn) -> None:
                if how == "invoke":
                    model.invoke(messages)
                else:
                    for _ in model.stream(messages):
                        pass

            base = _best(lambda: run(plain), n)
            mine = _best(lambda: run(compat), n)
            print(
                f"http {label}: ChatOpenAI {base * 1e3:.2f} ms, CompatibleChatOpenAI {mine * 1e3:.2f} ms, ratio {mine / base:.2f}"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
