"""Loading a user's DGS program from ``path/to/file.py:NAME`` (the check-dgs contract).

The user's file must not need to import streamproof: it is plain Python plus hypothesis
strategies. ``NAME`` is a module-level object (a class with static methods, an instance, a
``types.SimpleNamespace`` or a dict) with these members.

Simple form (one state type, named ``"State"``; one fork ``"fork"`` and one join ``"join"``)::

    tags                 a finite (frozen)set of hashable tags
    tag(event)           the event's tag
    depends(t1, t2)      bool, must be symmetric
    init()               the initial state
    update(state, event) -> state
    out(state, event)    -> list of outputs (of processing event in state, before the update)
    fork(state, left_tags, right_tags) -> (state, state)
    join(left, right)    -> state
    events()             a hypothesis strategy of events
    state_eq(a, b)       optional; == otherwise
    splits               optional; pairs (left_tags, right_tags) the checker should fork with
                         (each must be independent, else bad input)

Richer form (several state types, DGS Def. 2.1 items 4-7): instead of ``update``, ``out``,
``fork``, ``join``, ``state_eq`` the object has::

    initial      the name of State_0 (it must accept every tag)
    state_types  {name: {"update": f, "out": f, "tags": frozenset (default: all tags),
                         "state_eq": f (optional)}}
    forks        {name: {"from": "S_i", "to": ("S_j", "S_k"), "fn": f}}
    joins        {name: {"from": ("S_j", "S_k"), "to": "S_i", "fn": f}}

Everything is validated here, once: missing members, non-callables, unknown state types,
and the symmetry of ``depends`` (the error names the two tags). Any exception while loading
or calling the user's code becomes an :class:`~spec.errors.InputError` (CLI exit 2), also one
raised while reading a member (a ``@property`` or ``__getattr__`` that raises), and any
malformed declaration of the rich form (an unhashable state type name, a missing ``update``).

A :class:`Monitor` sees every piece of user code the loader runs: the import, reading the
members, and every user function (it may wrap them; the wrapped functions are the ones the
:class:`Program` keeps). ``streamproof check-dgs`` passes one that enforces time limits in its
sandbox (``streamproof.sandbox``); the default monitor does nothing.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import uuid
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Callable, Mapping, Protocol

from spec.dgs.program import (
    ForkPrim,
    JoinPrim,
    Pred,
    Program,
    StateType,
    Tag,
    UserCodeError,
    call_user,
    describe_error,
    short_repr,
)
from spec.errors import InputError

SIMPLE_MEMBERS = ("tags", "tag", "depends", "init", "update", "out", "fork", "join", "events")
RICH_MEMBERS = ("tags", "tag", "depends", "init", "initial", "state_types", "forks", "joins", "events")
ALL_MEMBERS = tuple(dict.fromkeys(SIMPLE_MEMBERS + RICH_MEMBERS + ("state_eq", "splits")))
SIMPLE_STATE = "State"
MAX_SOURCE_BYTES = 10_000_000
MAX_TAGS = 1000


class Monitor(Protocol):
    """Sees the user code the loader runs (see the module docstring)."""

    def running(self, label: str) -> AbstractContextManager[Any]:
        """A context in which user code runs that is not one function call (the import,
        reading the program's members); ``label`` says what, e.g. ``"importing prog.py"``."""

    def function(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """The user function ``fn`` (named ``label``, e.g. ``"P.update"``) as the program
        should call it."""

    def strategy(self, label: str, strategy: Any) -> Any:
        """The user's hypothesis strategy as the checker should draw from it."""


class _Unmonitored:
    def running(self, label: str) -> AbstractContextManager[Any]:
        return nullcontext()

    def function(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        return fn

    def strategy(self, label: str, strategy: Any) -> Any:
        return strategy


UNMONITORED: Monitor = _Unmonitored()


def load_program(target: str, monitor: Monitor = UNMONITORED) -> Program:
    """Load ``path/to/file.py:NAME`` and validate it into a :class:`Program`."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise InputError("expected FILE.py:NAME (a Python file and the program's name in it)", target)
    with monitor.running(f"importing {path}"):
        module = _import_file(path)
    with monitor.running(f"reading {name} from {path}"):
        if not _has(module, name, path):
            raise InputError(f"has no member {name!r}", path)
        obj = _member(module, name, path)
    return program_from_object(obj, name, monitor)


def _import_file(path: str) -> Any:
    if not os.path.exists(path):
        raise InputError("no such file", path)
    if os.path.isdir(path):
        raise InputError("is a directory, expected a Python file", path)
    if not os.path.isfile(path):  # a FIFO, /dev/zero, ...: reading it may never end
        raise InputError("is not a regular file, expected a Python file", path)
    if os.path.getsize(path) > MAX_SOURCE_BYTES:
        raise InputError(f"is larger than {MAX_SOURCE_BYTES // 1_000_000} MB, expected a Python program", path)
    module_name = f"_streamproof_dgs_user_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise InputError("cannot be loaded as a Python module", path)
    module = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        line = f" at line {error.lineno}" if error.lineno is not None else ""
        raise InputError(f"syntax error{line}: {error.msg}", path) from None
    except ValueError as error:
        if "null bytes" in str(error):  # Python 3.11 reports a binary file this way
            raise InputError("not Python source (it contains null bytes)", path) from None
        raise InputError(f"cannot load: {describe_error(error)}", path) from None
    except Exception as error:  # noqa: BLE001 - the user's module may raise anything
        raise InputError(f"cannot load: {describe_error(error)}", path) from None
    finally:
        if folder in sys.path:  # the module may have edited sys.path
            sys.path.remove(folder)
    return module


def _member(obj: Any, key: str, where: str) -> Any:
    """``obj[key]`` (a dict) or ``obj.key``; an InputError at ``where`` when it is missing or
    reading it raises (a ``@property`` or ``__getattr__`` of the user's)."""
    try:
        return obj[key] if isinstance(obj, Mapping) else getattr(obj, key)
    except (KeyError, AttributeError):
        raise InputError(f"missing member {key!r}", where) from None
    except Exception as error:  # noqa: BLE001 - user code may raise anything
        raise InputError(f"reading member {key!r} raised {describe_error(error)}", where) from None


def _has(obj: Any, key: str, where: str) -> bool:
    try:
        return key in obj if isinstance(obj, Mapping) else hasattr(obj, key)
    except Exception as error:  # noqa: BLE001 - user code may raise anything
        raise InputError(f"reading member {key!r} raised {describe_error(error)}", where) from None


def program_from_object(user_object: Any, name: str, monitor: Monitor = UNMONITORED) -> Program:
    """Validate a user's program object (either form, see the module docstring). Its members
    are read once, first (the monitor sees that as user code); the validation that follows
    runs on what was read."""
    with monitor.running(f"reading {name}'s members"):
        obj = {m: _member(user_object, m, name) for m in ALL_MEMBERS if _has(user_object, m, name)}
    rich = _has(obj, "state_types", name)
    required = RICH_MEMBERS if rich else SIMPLE_MEMBERS
    missing = [m for m in required if not _has(obj, m, name)]
    if missing:
        form = "the multi-state-type form" if rich else "a DGS program"
        raise InputError(
            f"missing member {missing[0]!r} ({form} needs: {', '.join(required)})", name
        )
    tags = _tags(_member(obj, "tags", name), f"{name}.tags")
    callables = {m: _callable(obj, m, name, f"{name}.{m}", monitor) for m in ("tag", "depends", "init", "events")}
    dependents = _dependence(tags, callables["depends"], name)
    strategy = monitor.strategy(f"{name}.events() strategy", _check_strategy(callables["events"], name))
    if rich:
        initial, state_types, forks, joins = _rich_parts(obj, name, tags, monitor)
    else:
        def simple(member: str) -> Callable[..., Any]:
            return _callable(obj, member, name, f"{name}.{member}", monitor)

        eq = simple("state_eq") if _has(obj, "state_eq", name) else None
        state_types = {SIMPLE_STATE: StateType(SIMPLE_STATE, tags, simple("update"), simple("out"), eq)}
        forks = {"fork": ForkPrim("fork", SIMPLE_STATE, SIMPLE_STATE, SIMPLE_STATE, simple("fork"))}
        joins = {"join": JoinPrim("join", SIMPLE_STATE, SIMPLE_STATE, SIMPLE_STATE, simple("join"))}
        initial = SIMPLE_STATE
    program = Program(
        name=name,
        tags=tags,
        tag_fn=callables["tag"],
        dependents=dependents,
        initial=initial,
        init_fn=callables["init"],
        state_types=state_types,
        forks=forks,
        joins=joins,
        events=callables["events"],
        event_strategy=strategy,
    )
    if _has(obj, "splits", name):
        program = _with_splits(program, _member(obj, "splits", name), name)
    return program


def _tags(value: Any, where: str) -> Pred:
    if not isinstance(value, (set, frozenset)):
        raise InputError(f"expected a finite frozenset of tags, got {type(value).__name__}", where)
    if not value:
        raise InputError("the set of tags is empty", where)
    if len(value) > MAX_TAGS:
        raise InputError(
            f"{len(value):,} tags; at most {MAX_TAGS:,} are supported (depends is tabulated on "
            "every pair of tags)", where
        )
    return frozenset(value)


def _callable(obj: Any, member: str, where: str, label: str, monitor: Monitor) -> Callable[..., Any]:
    """The user function ``member`` of ``obj`` as ``monitor`` wraps it (``label`` names it in
    messages, e.g. ``P.update``)."""
    value = _member(obj, member, where)
    if not callable(value):
        raise InputError(f"member {member!r} is not callable (got {type(value).__name__})", where)
    return monitor.function(label, value)


def _dependence(tags: Pred, depends: Callable[..., Any], name: str) -> dict[Tag, Pred]:
    """Tabulate ``depends`` over all pairs of tags; reject an answer that is not a bool and an
    asymmetric relation, naming the two tags."""
    ordered = sorted(tags, key=repr)
    table: dict[tuple[Tag, Tag], bool] = {}
    for t1 in ordered:
        for t2 in ordered:
            answer = call_user(f"{name}.depends", depends, t1, t2)
            if not isinstance(answer, bool):  # e.g. a forgotten return: None = "independent"
                raise UserCodeError(
                    f"{name}.depends",
                    f"returned {short_repr(answer)} for ({short_repr(t1)}, {short_repr(t2)}), "
                    f"expected True or False",
                )
            table[(t1, t2)] = answer
    for t1 in ordered:
        for t2 in ordered:
            if table[(t1, t2)] and not table[(t2, t1)]:
                raise InputError(
                    f"depends is not symmetric: depends({short_repr(t1)}, {short_repr(t2)}) is "
                    f"True but depends({short_repr(t2)}, {short_repr(t1)}) is False",
                    f"{name}.depends",
                )
    return {t1: frozenset(t2 for t2 in ordered if table[(t1, t2)]) for t1 in ordered}


def _check_strategy(events: Callable[..., Any], name: str) -> Any:
    from hypothesis.strategies import SearchStrategy

    strategy = call_user(f"{name}.events", events)
    if not isinstance(strategy, SearchStrategy):
        raise InputError(
            f"events() returned {short_repr(strategy)}, expected a hypothesis strategy", f"{name}.events"
        )
    return strategy


def _rich_parts(
    obj: Any, name: str, tags: Pred, monitor: Monitor
) -> tuple[str, dict[str, StateType], dict[str, ForkPrim], dict[str, JoinPrim]]:
    raw_types = _member(obj, "state_types", name)
    if not isinstance(raw_types, Mapping) or not raw_types:
        raise InputError("expected a non-empty dict {name: {...}}", f"{name}.state_types")
    state_types: dict[str, StateType] = {}
    for type_name, spec in raw_types.items():
        where = f"{name}.state_types[{short_repr(type_name)}]"
        if not isinstance(type_name, str) or not type_name:
            raise InputError(f"a state type's name must be a non-empty string, got {short_repr(type_name)}", where)
        if not isinstance(spec, Mapping):
            raise InputError("expected a dict with 'update', 'out' and optional 'tags', 'state_eq'", where)
        _reject_unknown(spec, {"update", "out", "tags", "state_eq"}, where)
        pred = _tags(spec["tags"], f"{where}['tags']") if "tags" in spec else tags
        if not pred <= tags:
            raise InputError(f"tags {short_repr(sorted(pred - tags, key=repr))} are not program tags", where)

        eq = _callable(spec, "state_eq", where, f"{where}.state_eq", monitor) if "state_eq" in spec else None
        update = _callable(spec, "update", where, f"{where}.update", monitor)
        out = _callable(spec, "out", where, f"{where}.out", monitor)
        state_types[type_name] = StateType(type_name, pred, update, out, eq)
    initial = _type_ref(_member(obj, "initial", name), state_types, f"{name}.initial")
    if state_types[initial].pred != tags:
        raise InputError("the initial state type must accept every tag (pred_0 = true)", f"{name}.initial")
    forks: dict[str, ForkPrim] = {}
    for fork_name, spec in _prims(obj, "forks", name).items():
        where = f"{name}.forks[{fork_name!r}]"
        source = _type_ref(spec.get("from"), state_types, f"{where}['from']")
        left, right = _type_pair(spec.get("to"), state_types, f"{where}['to']")
        fork_fn = _callable(spec, "fn", where, where, monitor)
        forks[fork_name] = ForkPrim(fork_name, source, left, right, fork_fn)
    joins: dict[str, JoinPrim] = {}
    for join_name, spec in _prims(obj, "joins", name).items():
        where = f"{name}.joins[{join_name!r}]"
        left, right = _type_pair(spec.get("from"), state_types, f"{where}['from']")
        target = _type_ref(spec.get("to"), state_types, f"{where}['to']")
        joins[join_name] = JoinPrim(join_name, left, right, target, _callable(spec, "fn", where, where, monitor))
    return initial, state_types, forks, joins


def _prims(obj: Any, member: str, name: str) -> dict[str, Mapping[str, Any]]:
    raw = _member(obj, member, name)
    if not isinstance(raw, Mapping):
        raise InputError("expected a dict {name: {'from': ..., 'to': ..., 'fn': ...}}", f"{name}.{member}")
    result: dict[str, Mapping[str, Any]] = {}
    for key, spec in raw.items():
        where = f"{name}.{member}[{short_repr(key)}]"
        if not isinstance(key, str) or not key:
            raise InputError(f"a name must be a non-empty string, got {short_repr(key)}", where)
        if not isinstance(spec, Mapping):
            raise InputError("expected a dict with 'from', 'to' and 'fn'", where)
        _reject_unknown(spec, {"from", "to", "fn"}, where)
        if "fn" not in spec:
            raise InputError("missing 'fn'", where)
        result[key] = spec
    return result


def _type_ref(value: Any, state_types: Mapping[str, StateType], where: str) -> str:
    if not isinstance(value, str) or value not in state_types:
        raise InputError(f"{short_repr(value)} is not one of the state types {sorted(state_types)}", where)
    return value


def _type_pair(value: Any, state_types: Mapping[str, StateType], where: str) -> tuple[str, str]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise InputError(f"expected a pair of state type names, got {short_repr(value)}", where)
    return _type_ref(value[0], state_types, where), _type_ref(value[1], state_types, where)


def _reject_unknown(spec: Mapping[str, Any], allowed: set[str], where: str) -> None:
    for key in spec:
        if key not in allowed:
            raise InputError(f"unknown key {short_repr(key)} (expected one of {sorted(allowed)})", where)


def _with_splits(program: Program, raw: Any, name: str) -> Program:
    """Validate ``splits``: pairs of tag sets, each pair independent (a fork may only be given
    independent predicates, Def. 2.1)."""
    where = f"{name}.splits"
    if not isinstance(raw, (list, tuple, set, frozenset)):
        raise InputError(f"expected a list of (left_tags, right_tags) pairs, got {type(raw).__name__}", where)
    splits: list[tuple[Pred, Pred]] = []
    for index, item in enumerate(raw):
        at = f"{where}[{index}]"
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise InputError("expected a pair (left_tags, right_tags)", at)
        left, right = _tags_any(item[0], at, program.tags), _tags_any(item[1], at, program.tags)
        program.require_independent(left, right, at)
        splits.append((left, right))
    return Program(
        name=program.name,
        tags=program.tags,
        tag_fn=program.tag_fn,
        dependents=program.dependents,
        initial=program.initial,
        init_fn=program.init_fn,
        state_types=program.state_types,
        forks=program.forks,
        joins=program.joins,
        events=program.events,
        splits=tuple(splits),
        event_strategy=program.event_strategy,
    )


def _tags_any(value: Any, where: str, tags: Pred) -> Pred:
    if not isinstance(value, (set, frozenset, list, tuple)):
        raise InputError(f"expected a set of tags, got {type(value).__name__}", where)
    unknown = [t for t in value if not _is_tag(t, tags)]
    if unknown:
        raise InputError(f"unknown tags {short_repr(unknown)}", where)
    return frozenset(value)


def _is_tag(value: Any, tags: Pred) -> bool:
    try:
        return value in tags
    except TypeError:  # unhashable, e.g. a list where a tag was meant
        return False
