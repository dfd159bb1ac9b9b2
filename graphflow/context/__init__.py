"""Context engineering: what a ReAct agent's model is sent as the conversation grows.

Layered, after Lynxe (see DESIGN.md): `ObservationMasking` hides old tool results behind
recallable placeholders; `Summarization` condenses older rounds into a five-section summary when
the window fills; `HybridContext` (recommended) does the first, then the second only when needed,
and breaks tool-call loops. Each is a `ContextStep`, and a policy is an ordered list of steps:
`ContextPipeline([...])` runs yours beside them. All are hooks:
`ReactAgent(context=HybridContext())` or `hooks=[...]`. Tokens are counted offline
(`count_tokens`).
"""

from graphflow.context.hybrid import HybridContext
from graphflow.context.loops import LoopBreaker, LoopEvent
from graphflow.context.masking import ObservationMasking
from graphflow.context.offload import (
    DirectoryOffload,
    OffloadLocation,
    OffloadStore,
    StoreOffload,
)
from graphflow.context.pairs import check_tool_pairs, repair_tool_pairs
from graphflow.context.pipeline import ContextPipeline
from graphflow.context.policy import ContextPolicy
from graphflow.context.recall import RECALL_TOOL
from graphflow.context.stats import ContextStats
from graphflow.context.step import ContextStep, StepContext
from graphflow.context.summarization import Summarization
from graphflow.context.tokens import OFFLINE_ENCODING, TokenCounter, count_tokens, token_counter
from graphflow.context.windows import CONTEXT_WINDOWS, DEFAULT_CONTEXT_WINDOW, context_window

__all__ = (
    "CONTEXT_WINDOWS",
    "DEFAULT_CONTEXT_WINDOW",
    "OFFLINE_ENCODING",
    "RECALL_TOOL",
    "ContextPipeline",
    "ContextPolicy",
    "ContextStats",
    "ContextStep",
    "DirectoryOffload",
    "HybridContext",
    "LoopBreaker",
    "LoopEvent",
    "ObservationMasking",
    "OffloadLocation",
    "OffloadStore",
    "StepContext",
    "StoreOffload",
    "Summarization",
    "TokenCounter",
    "check_tool_pairs",
    "context_window",
    "count_tokens",
    "repair_tool_pairs",
    "token_counter",
)
