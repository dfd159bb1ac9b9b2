"""Savers whose damaged rows are one clear error: the thread, the store, and what to do.

A checkpoint row whose bytes cannot be decoded (a disk fault, a hand edit, a half-copied file)
makes LangGraph's savers raise the decoder's own `ValueError` ("invalid type Reserved") from
`get_state`, `history`, `resume` and `invoke`. The savers graphflow builds from URLs raise a
`CheckpointStoreError` naming the thread and the store instead; `runs()` lists that thread as
`unreadable` and every other thread keeps working.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from graphflow.exceptions import CheckpointStoreError, GraphflowError

__all__ = ("named_errors",)


@contextlib.contextmanager
def _loading(store: str, config: Any) -> Iterator[None]:
    try:
        yield
    except GraphflowError:
        raise  # (a forbidden type is already a CheckpointTypeError)
    except (ValueError, TypeError) as exc:
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        which = f"thread {thread!r}" if thread is not None else "a thread"
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise CheckpointStoreError(
            f"checkpoint store {store}: a checkpoint of {which} cannot be loaded "
            f"({type(exc).__name__}: {reason}) — its stored bytes are damaged. Other threads are "
            "not affected (runs() lists this one as unreadable); restore the store from a "
            "backup, or go on with a new thread id",
            store=store,
        ) from exc


class _NamedErrors(BaseCheckpointSaver):  # (a saver base: graphflow may extend its class)
    """Mixin for a LangGraph saver: loading failures become `CheckpointStoreError`s."""

    store_name: str = "the checkpoint store"

    def get_tuple(self, config: Any) -> Any:  # noqa: D102
        with _loading(self.store_name, config):
            return super().get_tuple(config)  # type: ignore[misc]

    def list(self, config: Any, **kwargs: Any) -> Iterator[Any]:  # noqa: D102
        with _loading(self.store_name, config):
            yield from super().list(config, **kwargs)  # type: ignore[misc]

    def get_delta_channel_history(self, *, config: Any, channels: Any) -> Any:  # noqa: D102
        with _loading(self.store_name, config):
            return super().get_delta_channel_history(config=config, channels=channels)  # type: ignore[misc]

    async def aget_delta_channel_history(self, *, config: Any, channels: Any) -> Any:  # noqa: D102
        with _loading(self.store_name, config):
            return await super().aget_delta_channel_history(config=config, channels=channels)  # type: ignore[misc]

    async def aget_tuple(self, config: Any) -> Any:  # noqa: D102
        with _loading(self.store_name, config):
            return await super().aget_tuple(config)  # type: ignore[misc]

    async def alist(self, config: Any, **kwargs: Any) -> AsyncIterator[Any]:  # noqa: D102
        with _loading(self.store_name, config):
            async for item in super().alist(config, **kwargs):  # type: ignore[misc]
                yield item


_classes: dict[type, type] = {}


def named_errors(saver_class: type, *args: Any, store: str, **kwargs: Any) -> Any:
    """A `saver_class(*args, **kwargs)` whose loading failures name the thread and `store`."""
    cls = _classes.get(saver_class)
    if cls is None:
        cls = _classes[saver_class] = type(saver_class.__name__, (_NamedErrors, saver_class), {})
    saver = cls(*args, **kwargs)
    saver.store_name = store
    return saver
