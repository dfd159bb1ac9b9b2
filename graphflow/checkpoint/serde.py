"""A checkpoint serializer that never executes code from the database.

Savers built by `resolve_checkpointer` use `GraphflowSerializer`: LangGraph's msgpack
`JsonPlusSerializer` with no pickle fallback and an explicit allowlist — LangGraph's safe
defaults (datetime, UUID, LangChain messages, `Send`, `Interrupt`, ...), the output schemas of the
agent tree (pydantic models and the models and enums they nest), and types registered with
`allow_types`. LangGraph itself only logs a warning for a type outside the allowlist and hands
back the raw data; this serializer raises `CheckpointTypeError` naming the type instead.
"""

from __future__ import annotations

import dataclasses
import enum
import threading
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde import _msgpack as lg_msgpack
from langgraph.checkpoint.serde.jsonplus import (
    EXT_CONSTRUCTOR_KW_ARGS,
    EXT_CONSTRUCTOR_POS_ARGS,
    EXT_CONSTRUCTOR_SINGLE_ARG,
    EXT_DELTA_SNAPSHOT,
    EXT_METHOD_SINGLE_ARG,
    EXT_PYDANTIC_V1,
    EXT_PYDANTIC_V2,
    JsonPlusSerializer,
    _create_msgpack_ext_hook,
    _normalize_allowlist,
)
from pydantic import BaseModel, TypeAdapter

from graphflow.exceptions import CheckpointTypeError

__all__ = (
    "CheckpointTypeError",
    "GraphflowSerializer",
    "allow_types",
    "allowed_types",
    "allowlist_of",
    "disallow_types",
    "safe_serializer",
    "schema_types",
    "MAX_DEPTH",
    "Unstorable",
    "stored_form",
    "storing_advice",
    "unstorable",
)

TypeKey = tuple[str, str]

_CONSTRUCTORS = frozenset(
    {
        EXT_CONSTRUCTOR_SINGLE_ARG,
        EXT_CONSTRUCTOR_POS_ARGS,
        EXT_CONSTRUCTOR_KW_ARGS,
        EXT_PYDANTIC_V1,
        EXT_PYDANTIC_V2,
    }
)
_registry: set[TypeKey] = set()
_registry_lock = threading.Lock()


_registry_version = 0
"""Bumped by `allow_types`, so every graphflow serializer picks the new classes up."""


def _key(item: type | tuple[str, ...]) -> TypeKey:
    if isinstance(item, type):
        return (item.__module__, item.__name__)
    if isinstance(item, tuple) and len(item) == 2 and all(isinstance(p, str) for p in item):
        return (item[0], item[1])
    raise TypeError(f"allow_types: expected a class or a (module, name) pair, got {item!r}")


def _class_of(item: Any) -> type:
    """The class `item` names; a function, a module or any other callable is refused."""
    if isinstance(item, type):
        return item
    if isinstance(item, tuple) and len(item) == 2 and all(isinstance(p, str) for p in item):
        import importlib

        try:
            found = getattr(importlib.import_module(item[0]), item[1])
        except (ImportError, AttributeError) as exc:
            raise TypeError(
                f"allow_types: {item[0]}.{item[1]} cannot be found ({exc}); pass the class itself"
            ) from None
        if isinstance(found, type):
            return found
        item = found
    kind = "a module" if isinstance(item, types.ModuleType) else f"a {type(item).__name__}"
    raise TypeError(
        f"allow_types: {item!r} is {kind}, not a class; only classes can be allowed (loading a "
        "checkpoint constructs them — allowing a function such as os.system would let a crafted "
        "checkpoint call it)"
    )


def _storable_kind(klass: type) -> bool:
    """Whether LangGraph's msgpack encoder has a format for instances of `klass`.

    Dataclasses, pydantic models (v1 and v2), enums, NamedTuples and LangGraph's safe types
    (datetime, UUID, Decimal, Path, ...) — not a plain class, whose instances it cannot write.
    """
    if issubclass(klass, BaseModel | enum.Enum) or dataclasses.is_dataclass(klass):
        return True
    if issubclass(klass, tuple) and hasattr(klass, "_asdict"):  # a NamedTuple
        return True
    if callable(getattr(klass, "model_dump", None)):  # pydantic v2 outside BaseModel's tree
        return True
    if hasattr(klass, "__fields__") and callable(getattr(klass, "dict", None)):  # pydantic v1
        return True
    safe = {(str(k[0]), str(k[1])) for k in lg_msgpack.SAFE_MSGPACK_TYPES if len(k) == 2}
    return _key(klass) in safe or any(_key(base) in safe for base in klass.__mro__)


def _refuse_plain(klass: type) -> TypeError:
    return TypeError(
        f"allow_types: {klass.__module__}.{klass.__qualname__} is a plain class, and a checkpoint "
        "can only store dataclasses, pydantic models, enums and NamedTuples (LangGraph's "
        "serializer has no format for other objects: the write would fail). Make it a "
        "@dataclass or a pydantic model, or put plain data (a dict) in state"
    )


def allow_types(*items: type | tuple[str, str]) -> None:
    """Allow these classes (or `(module, name)` pairs naming classes) in checkpoints.

    Takes effect at once, for every graphflow saver, new or already built. Output schemas of
    the agents being compiled are allowed automatically; use this for other values you put in
    state (a `FunctionAgent` returning a dataclass, an enum, a tool artifact, ...). Only classes
    a checkpoint can store are accepted — dataclasses, pydantic models, enums, NamedTuples;
    anything else raises `TypeError` here rather than failing later, mid-run.
    """
    global _registry_version
    keys: set[TypeKey] = set()
    for item in items:
        klass = _class_of(item)
        if not _storable_kind(klass):
            raise _refuse_plain(klass)
        keys.add(_key(klass))
        keys |= {_key(t) for t in _nested_types(klass)}
    with _registry_lock:
        _registry.update(keys)
        _registry_version += 1


def disallow_types(*items: type | tuple[str, str]) -> None:
    """Take classes `allow_types` allowed off the allowlist again (takes effect at once)."""
    global _registry_version
    keys = {_key(i) for i in items}
    with _registry_lock:
        _registry.difference_update(keys)
        _registry_version += 1


def allowed_types() -> frozenset[TypeKey]:
    """Every `(module, name)` a graphflow saver may construct (safe defaults + registered)."""
    with _registry_lock:
        extra = set(_registry)
    safe = {(str(k[0]), str(k[1])) for k in lg_msgpack.SAFE_MSGPACK_TYPES if len(k) == 2}
    return frozenset(safe) | _message_types() | extra


def _message_types() -> frozenset[TypeKey]:
    import langchain_core.messages as lc

    out: set[TypeKey] = set()
    for name in lc.__all__:
        obj = getattr(lc, name, None)
        if isinstance(obj, type) and issubclass(obj, lc.BaseMessage):
            out.add(_key(obj))
    return frozenset(out)


def _nested_types(tp: Any, seen: set[Any] | None = None) -> list[type]:
    """`tp` and the pydantic models, dataclasses and enums its fields use (recursively)."""
    seen = set() if seen is None else seen
    if tp in seen:
        return []
    seen.add(tp)
    out: list[type] = []
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        out.append(tp)
        for field in tp.model_fields.values():
            out.extend(_nested_types(field.annotation, seen))
        return out
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return [tp]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        out.append(tp)
        try:
            hints = typing.get_type_hints(tp)
        except Exception:  # noqa: BLE001 - unresolvable forward references: the field types as written
            hints = {f.name: f.type for f in dataclasses.fields(tp)}
        for hint in hints.values():
            out.extend(_nested_types(hint, seen))
        return out
    origin = typing.get_origin(tp)
    if origin is not None or isinstance(tp, types.UnionType):
        for arg in typing.get_args(tp):
            out.extend(_nested_types(arg, seen))
    return out


def schema_types(agents: Iterable[Any]) -> list[type]:
    """The output schemas of `agents`, with the models and enums nested in them."""
    seen: set[Any] = set()
    out: list[type] = []
    for agent in agents:
        schema = getattr(agent, "output_schema", None)
        if schema is not None:
            out.extend(_nested_types(schema, seen))
    return out


_blocked = threading.local()


def _find_blocked(exc: BaseException | None) -> CheckpointTypeError | None:
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, CheckpointTypeError):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def _refuse(module: str, name: str) -> CheckpointTypeError:
    error = CheckpointTypeError(module, name)
    if getattr(_blocked, "error", None) is None:
        _blocked.error = error
    return error


def _strict_hook(
    allowed: frozenset[TypeKey], inner: Callable[[int, bytes], Any]
) -> Callable[[int, bytes], Any]:
    """An ormsgpack ext hook that checks every nested type first, then lets LangGraph build it."""

    def check(code: int, data: bytes) -> None:
        if code in _CONSTRUCTORS or code == EXT_METHOD_SINGLE_ARG or code == EXT_DELTA_SNAPSHOT:
            tup = ormsgpack.unpackb(data, ext_hook=nested, option=ormsgpack.OPT_NON_STR_KEYS)
            if code == EXT_DELTA_SNAPSHOT:
                return
            module, name = str(tup[0]), str(tup[1])
            if code == EXT_METHOD_SINGLE_ARG:
                if (module, name, str(tup[3])) not in lg_msgpack.SAFE_MSGPACK_METHODS:
                    raise _refuse(module, f"{name}.{tup[3]}")
            elif (module, name) not in allowed:
                raise _refuse(module, name)

    def nested(code: int, data: bytes) -> None:
        check(code, data)
        return None

    def hook(code: int, data: bytes) -> Any:
        check(code, data)
        return inner(code, data)

    return hook


class GraphflowSerializer(JsonPlusSerializer):
    """`JsonPlusSerializer` without pickle and with a strict msgpack allowlist.

    Loading a type outside the allowlist raises `CheckpointTypeError` (LangGraph would warn and
    return the raw data).
    """

    def __init__(self, extra_types: Iterable[type | tuple[str, str]] = ()) -> None:
        self._extra = frozenset(_key(t) for t in extra_types)
        self._version = _registry_version
        allowed = set(allowed_types()) | self._extra
        super().__init__(pickle_fallback=False, allowed_msgpack_modules=tuple(sorted(allowed)))
        self._install()

    def allow(self, extra_types: Iterable[type]) -> None:
        """Also allow `extra_types` (and the models they nest) in this serializer."""
        keys = {_key(t) for t in extra_types} | {
            _key(n) for t in extra_types for n in _nested_types(t)
        }
        if keys <= self._extra:
            return
        self._extra = self._extra | keys
        self._refresh()

    def _refresh(self) -> None:
        self._version = _registry_version
        allowed = set(allowed_types()) | self._extra
        self._allowed_msgpack_modules = _normalize_allowlist(tuple(sorted(allowed)))
        self._install()

    def _install(self) -> None:
        modules = self._allowed_msgpack_modules
        allowed = frozenset(
            (str(k[0]), str(k[1])) for k in (modules if isinstance(modules, set) else ())
        )
        self._unpack_ext_hook = _strict_hook(allowed, _create_msgpack_ext_hook(modules))

    @property
    def allowed(self) -> frozenset[TypeKey]:
        """The `(module, name)` pairs this serializer constructs."""
        if self._version != _registry_version:
            self._refresh()
        modules = self._allowed_msgpack_modules
        cached = getattr(self, "_allowed_cache", None)
        if cached is None or cached[0] is not modules:
            keys = frozenset(
                (str(k[0]), str(k[1])) for k in (modules if isinstance(modules, set) else ())
            )
            cached = self._allowed_cache = (modules, keys)
        return cached[1]

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Load a value; a disallowed type raises `CheckpointTypeError` (not ormsgpack's error)."""
        if self._version != _registry_version:
            self._refresh()  # allow_types was called since: take its classes
        _blocked.error = None
        try:
            return super().loads_typed(data)
        except ValueError as exc:
            blocked = _blocked.error or _find_blocked(exc)
            if blocked is not None:
                raise blocked from None
            raise
        finally:
            _blocked.error = None

    def with_msgpack_allowlist(
        self, extra_allowlist: Iterable[tuple[str, ...] | type]
    ) -> JsonPlusSerializer:
        """A copy that also allows `extra_allowlist` (LangGraph calls this in strict mode)."""
        clone = super().with_msgpack_allowlist(extra_allowlist)
        if clone is not self and isinstance(clone, GraphflowSerializer):
            clone._install()
        return clone


def safe_serializer(extra_types: Iterable[type | tuple[str, str]] = ()) -> GraphflowSerializer:
    """A `GraphflowSerializer` that also allows `extra_types` (and the models they nest)."""
    expanded: list[type | tuple[str, str]] = []
    for item in extra_types:
        expanded.append(item)
        if isinstance(item, type):
            expanded.extend(_nested_types(item))
    return GraphflowSerializer(expanded)


_PLAIN = (str, int, float, bool, bytes, type(None))
_ANY: TypeAdapter[Any] = TypeAdapter(Any)


def stored_form(value: Any) -> Any:
    """`value` as a message field stores it: pydantic's dump (dataclasses and models as dicts).

    A message — a tool's `ToolMessage` with its `artifact` — is checkpointed as its pydantic
    dump, so an artifact comes back as plain data whatever its class; an object pydantic cannot
    dump (a client) stays as it is, and `unstorable` finds it.
    """
    if value is None or isinstance(value, _PLAIN):
        return value
    try:
        return _ANY.dump_python(value)
    except Exception:  # noqa: BLE001 - pydantic could not dump it: checked as it is
        return value


def allowlist_of(config: Any) -> frozenset[TypeKey] | None:
    """The allowlist of the saver a run (its LangGraph `config`) writes to, if it is graphflow's.

    None for runs without a checkpointer, or on a saver with another serializer (not checked).
    """
    saver = ((config or {}).get("configurable") or {}).get("__pregel_checkpointer")
    serde = getattr(saver, "serde", None)
    return serde.allowed if isinstance(serde, GraphflowSerializer) else None


MAX_DEPTH = 200
"""Deepest nesting of containers a checkpointed value may have (msgpack stops at 255 levels,
counting the checkpoint's own)."""
_INT_RANGE = (-(2**63), 2**64 - 1)
"""The integers msgpack can hold (signed and unsigned 64-bit)."""


class Unstorable(str):
    """What `unstorable` found: `"path: what"`, and what to do about it.

    `fix` is set when the trouble is the value itself (an integer beyond 64 bits, text that is
    not valid Unicode, nesting too deep, a value that contains itself) rather than its type.
    """

    fix: str = ""


def _bad_value(where: str, what: str, fix: str) -> Unstorable:
    if len(where) > 100:  # (a path 200 levels deep)
        where = f"{where[:60]}…{where[-30:]}"
    found = Unstorable(f"{where or 'value'}: {what}")
    found.fix = fix
    return found


def storing_advice(found: str, type_advice: str) -> str:
    """What to tell the user about `found`: its own fix, or `type_advice` for a type."""
    return getattr(found, "fix", "") or type_advice


def _plain_trouble(item: Any, where: str) -> Unstorable | None:
    """What msgpack cannot store faithfully in a plain value (None: it stores it as it is)."""
    if isinstance(item, str):
        if item.isascii():
            return None
        try:
            item.encode("utf-8")
        except UnicodeEncodeError as exc:
            return _bad_value(
                where,
                f"text holding a lone surrogate at index {exc.start} (undecodable bytes, as left "
                "by errors='surrogateescape')",
                "a checkpoint stores text as UTF-8, which cannot hold it (the run would read "
                "back other text, or fail); decode the bytes with errors='replace' (or in their "
                "real encoding) first",
            )
        return None
    if isinstance(item, int) and not isinstance(item, bool):
        if not _INT_RANGE[0] <= item <= _INT_RANGE[1]:
            return _bad_value(
                where,
                f"an integer of {len(str(abs(item)))} digits",
                "a checkpoint stores integers of at most 64 bits; write it as text (str(n)) "
                "and convert it back where it is used",
            )
    return None


def unstorable(value: Any, allowed: frozenset[TypeKey], *, path: str = "") -> str | None:
    """Where `value` holds something a checkpoint could not give back, or None if it all can.

    The answer is `"path: module.Type"` for the first such part: a function, a client, an
    instance of a class outside `allowed` (the serializer's allowlist), or of an allowed class
    the serializer cannot write (a plain class). Containers, dataclasses and pydantic models are
    looked into; messages are taken as they are. A value msgpack cannot hold faithfully — an
    integer beyond 64 bits, text with a lone surrogate (stored as `?`), nesting deeper than
    `MAX_DEPTH`, a container that holds itself — is an `Unstorable` whose `fix` says why.
    """
    seen: set[int] = set()
    inside: set[int] = set()  # the containers on the path to the item (a cycle comes back)

    def visit(item: Any, where: str, depth: int) -> str | None:
        if isinstance(item, _PLAIN):
            return _plain_trouble(item, where)
        if id(item) in inside:
            return _bad_value(
                where,
                f"a {type(item).__name__} that holds itself",
                "a checkpoint cannot store a value that contains itself; break the cycle",
            )
        if depth >= MAX_DEPTH:
            return _bad_value(
                where,
                f"a value nested more than {MAX_DEPTH} levels deep",
                f"a checkpoint stores values nested at most {MAX_DEPTH} levels deep; flatten it",
            )
        if id(item) in seen:
            return None
        seen.add(id(item))
        inside.add(id(item))
        try:
            return look_into(item, where, depth)
        finally:
            inside.discard(id(item))

    def look_into(item: Any, where: str, depth: int) -> str | None:
        if isinstance(item, dict):
            for k, v in item.items():
                found = visit(k, f"{where}[{k!r:.40}] (key)", depth + 1) or visit(
                    v, f"{where}[{k!r:.40}]", depth + 1
                )
                if found:
                    return found
            return None
        if isinstance(item, list | tuple | set | frozenset):
            if type(item) not in (list, tuple, set, frozenset) and _key(type(item)) not in allowed:
                return f"{where or 'value'}: {type(item).__module__}.{type(item).__qualname__}"
            for i, v in enumerate(item):
                found = visit(v, f"{where}[{i}]", depth + 1)
                if found:
                    return found
            return None
        kind = type(item)
        from langchain_core.messages import BaseMessage

        if isinstance(item, BaseMessage):
            return None
        name = f"{where or 'value'}: {kind.__module__}.{kind.__qualname__}"
        if _key(kind) not in allowed:
            return name
        if isinstance(item, enum.Enum):
            return None
        if dataclasses.is_dataclass(item):
            fields = {f.name: getattr(item, f.name, None) for f in dataclasses.fields(item)}
        elif isinstance(item, BaseModel):
            fields = dict(item.__dict__)
        elif _storable_kind(kind):
            return None
        else:
            return f"{name} (a plain class: a checkpoint stores dataclasses, pydantic models)"
        for field, v in fields.items():
            found = visit(v, f"{where or 'value'}.{field}", depth + 1)
            if found:
                return found
        return None

    return visit(value, path, 0)
