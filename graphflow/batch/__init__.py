"""Run one agent team over many inputs: every input its own durable thread, the batch resumable.

```python
results = team.batch(["Pura X", "Pixel 9"], concurrency=4, checkpointer="sqlite:///runs.db")
for r in results:
    print(r.id, r.status, r.outputs)
```

Running the same batch again (same `batch_id`, same store) skips the inputs that finished and
resumes the ones that failed, crashed or were stopped from their last checkpoint: completed model
and tool calls are never repeated. `graphflow batch` is the command-line face; `engine="ray"`
spreads the inputs over a Ray cluster (see `graphflow.batch.ray`).
"""

from graphflow.batch.inputs import BadLine, BatchInput, read_inputs
from graphflow.batch.local import abatch, abatch_iter, batch, batch_iter
from graphflow.batch.results import BatchResult, BatchStatus
from graphflow.batch.threads import batch_thread_id, default_batch_id

__all__ = (
    "BadLine",
    "BatchInput",
    "BatchResult",
    "BatchStatus",
    "abatch",
    "abatch_iter",
    "batch",
    "batch_iter",
    "batch_thread_id",
    "default_batch_id",
    "read_inputs",
)
