"""Thread ids of a batch's inputs: readable, bounded in length, never colliding."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

__all__ = ("MAX_KEY_CHARS", "batch_thread_id", "default_batch_id")

MAX_KEY_CHARS = 48
"""Longest readable part of an input's key kept in its thread id (a hash keeps them apart)."""
_UNSAFE = re.compile(r"[^\w.-]+", re.UNICODE)


def _readable(text: str, limit: int) -> str:
    # letters of every script stay (NFKC folds width variants); spaces and punctuation become '-'
    cleaned = _UNSAFE.sub("-", unicodedata.normalize("NFKC", text)).strip("-.")
    return cleaned[:limit].rstrip("-.")


def batch_thread_id(batch_id: str, key: str) -> str:
    """The thread of input `key` in batch `batch_id`: `BATCH/KEY`, bounded, collision-free.

    A key that is already short and safe is kept as is (`products/0`, `products/pura-x`); any
    other key keeps a readable prefix and gains a short hash of the whole key, so two inputs
    never share a thread however long or alike their keys are.
    """
    readable = _readable(key, MAX_KEY_CHARS)
    if readable != key or not readable:
        # (surrogatepass: a key holding a lone surrogate, from a JSON `\ud800`, still hashes)
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        readable = f"{readable}~{digest}" if readable else digest
    return f"{batch_id}/{readable}"


def default_batch_id(agent_name: str, inputs: Sequence[Any]) -> str:
    """A batch id that is the same whenever the same team runs over the same inputs."""
    blob = json.dumps([getattr(i, "value", i) for i in inputs], sort_keys=True, default=repr)
    return f"{agent_name}-{hashlib.sha256(blob.encode('utf-8')).hexdigest()[:10]}"
