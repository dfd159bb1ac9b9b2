"""What several of graphflow's packages share and none of them owns (not public API).

* `workers` — daemon worker threads; a call run on one under a timeout (tool and model calls
  alike); a coroutine run to its end from sync code.
* `hook_calls` — calling a hook's sync or async method, whichever its class defines.
* `approval` — the words of an approval: the request type, the decisions, the answer's shape.
* `passwords` — passwords masked in messages and store names.
* `commands` — the commands graphflow prints (resume, run), shell-quoted, without passwords.

Modules here import only the leaves (`graphflow.exceptions`, ...) and each other: every layer
may use them, and nothing else reaches into another package's private modules.
"""
