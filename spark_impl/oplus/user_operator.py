"""A user-defined O+ operator on the live front end: the STRETCH definition
(``spec.oplus.model.OPlus``: WA, WS, window type, f_MK, f_U, f_O, f_S, the state type's
``empty``/``is_empty``) run per key by Spark tasks, with no ``reference/`` code.

**Getting the operator to the workers.** :class:`UserOperator` travels inside every task's
plan and yields the ``OPlus`` there, either

* from a target ``"path/to/file.py:NAME"`` (``NAME``: a module-level ``OPlus``), loaded once
  per Python worker, as the DGS live front end loads a program (the file must be readable at
  the same path on every worker: a shared path, or shipped with ``--files``/``--py-files``); or
* from an ``OPlus`` object, pickled *by value* on the driver with PySpark's cloudpickle (its
  functions, and what they reference from their module, travel with it, so the module need
  not be importable on the workers; a lambda or closure is fine).

Either way the states, keys and payloads the functions make are pickled into the checkpoint
with the standard ``pickle``: they must be built-in values (numbers, strings, tuples,
frozensets, dicts, ...) or instances of classes importable on every worker.

**Tuples.** A stream row of source ``s`` becomes ``StreamTuple(ts, s, seq, payload, input)``:
``payload`` is the value of the job's one field, or the tuple of its fields' values in the
order given (``fields``); ``input`` is ``s`` when the operator has several inputs (``inputs
> 1``: then the job has exactly ``inputs`` sources), else 0.

**Processing: exactly the per-key meaning of ``spec.oplus.semantics``.** An instance keeps,
per key it owns (``route_key``), the tuples not yet released and the key's window sets. A
micro-batch adds its tuples (one copy per key of f_MK, SN style), then releases, in the tuple
buffer order ``(ts, source, seq, payload)``, every tuple below the new watermark ``W`` (a
later tuple cannot precede it: the watermark is a promise), applying f_U to every instance it
falls in (WT multi) or to the earliest open instance after expiring and shifting the chain
(WT single, Alg. 2), and finally emits f_O of every instance with ``L + WS <= W``. So every
key sees its tuples in timestamp order whatever order the stream delivered them in, and the
outputs equal O+'s outputs on the sorted input for *any* f_U (order-sensitive or not). The
cost: tuples wait in state until the watermark passes them (at most ``allowed_lateness`` plus
the batch interval of event time). An output is ``(L + WS, key, payload)``: the window's right
boundary, the key of its window set, and the payload f_U or f_O returned.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping

from spec.errors import InputError
from spec.oplus.model import OPlus, StreamTuple, WindowSet, WindowType
from spec.oplus.windows import WindowSpec

_LOADED: dict[str, OPlus] = {}

Pending = tuple[int, int, int, Any, int]
"""A tuple waiting for the watermark: ``(ts, source, seq, payload, input)``."""


def load_operator(target: str) -> OPlus:
    """The ``OPlus`` named by ``"path/to/file.py:NAME"`` (InputError naming the problem)."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise InputError("expected FILE.py:NAME (a Python file and the O+ operator's name in it)", target)
    if not os.path.isfile(path):
        raise InputError("no such file", path)
    # the same name in every process: a class of the file pickled into the checkpoint by one
    # worker is found by another that loaded the same file
    digest = hashlib.blake2b(os.path.abspath(path).encode(), digest_size=8).hexdigest()
    module_name = f"_streamproof_oplus_user_{digest}"
    loaded = getattr(sys.modules.get(module_name), name, None)
    if isinstance(loaded, OPlus):
        return loaded
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise InputError("cannot be loaded as a Python module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001 - the user's module may raise anything
        del sys.modules[module_name]
        raise InputError(f"cannot load: {type(error).__name__}: {error}", path) from None
    operator = getattr(module, name, None)
    if not isinstance(operator, OPlus):
        raise InputError(f"{name!r} is {type(operator).__name__}, expected a spec.oplus.model.OPlus", target)
    return operator


@dataclass(frozen=True)
class UserOperator:
    """What a task needs to run a user's O+ (module docstring): ``target`` or ``shipped``
    (cloudpickled ``OPlus`` bytes), the stream ``fields`` per source, and the windows."""

    name: str
    wa: int
    ws: int
    single: bool
    inputs: int
    fields: tuple[tuple[str, ...], ...]
    target: str | None = None
    shipped: bytes | None = field(default=None, repr=False)

    def operator(self) -> OPlus:
        """The ``OPlus`` (loaded or unpickled once per Python process)."""
        ident = (self.target if self.target is not None
                 else "shipped:" + hashlib.blake2b(self.shipped or b"", digest_size=16).hexdigest())
        found = _LOADED.get(ident)
        if found is None:
            found = load_operator(self.target) if self.target is not None else pickle.loads(self.shipped or b"")
            _LOADED[ident] = found
        return found

    def fields_of(self, source: int) -> tuple[str, ...]:
        """The fields a row of ``source`` must carry."""
        return self.fields[source] if len(self.fields) > 1 else self.fields[0]

    def stream_tuple(self, ts: int, source: int, seq: int, values: Mapping[str, Any]) -> StreamTuple:
        """The ``StreamTuple`` of a stream row (module docstring: payload and input)."""
        names = self.fields_of(source)
        payload = values[names[0]] if len(names) == 1 else tuple(values[n] for n in names)
        return StreamTuple(ts, source, seq, payload, source if self.inputs > 1 else 0)

    def keys_of(self, item_fields: Mapping[str, Any], ts: int = 0, source: int = 0, seq: int = 0) -> list[Any]:
        """f_MK of a stream row (the keys it belongs to)."""
        return list(self.operator().keys(self.stream_tuple(ts, source, seq, item_fields)))


def user_operator(operator: Any, *, fields: Any, sources: int | None) -> tuple[UserOperator, int]:
    """Validate a user's operator (an ``OPlus`` or ``"file.py:NAME"``) and its ``fields``;
    ``(UserOperator, number of sources)``. InputError on bad input."""
    target = None
    if isinstance(operator, str):  # made absolute: a worker's working directory may differ
        path, _, name = operator.rpartition(":")
        target = f"{os.path.abspath(path)}:{name}" if path and name else operator
    op = load_operator(target) if target is not None else operator
    if not isinstance(op, OPlus):
        raise InputError(f"expected a catalogue name, 'file.py:NAME' or a spec.oplus.model.OPlus, got "
                         f"{type(operator).__name__}", "operator")
    count = sources if sources is not None else op.inputs
    if count < 1:
        raise InputError(f"must be >= 1, got {count}", "sources")
    if op.inputs > 1 and count != op.inputs:
        raise InputError(f"operator {op.name!r} has {op.inputs} inputs: the job needs {op.inputs} sources, got "
                         f"{count}", "sources")
    per_source = _fields(fields, count)
    shipped = None
    if target is None:
        shipped = _ship(op)
    return UserOperator(op.name, op.windows.WA, op.windows.WS, op.window_type is WindowType.SINGLE, op.inputs,
                        per_source, target, shipped), count


def _fields(fields: Any, sources: int) -> tuple[tuple[str, ...], ...]:
    """``fields``: names for every source, or one list of names per source."""
    if isinstance(fields, str) or not isinstance(fields, (list, tuple)) or not fields:
        raise InputError("a user operator needs fields=(names...) (the stream columns its payload is made of), "
                         f"or one tuple of names per source; got {fields!r}", "fields")
    if all(isinstance(f, str) for f in fields):
        per_source: tuple[tuple[str, ...], ...] = (tuple(fields),)
    elif all(isinstance(f, (list, tuple)) for f in fields):
        per_source = tuple(tuple(f) for f in fields)
    else:
        raise InputError(f"expected names, or one tuple of names per source; got {fields!r}", "fields")
    if len(per_source) > 1 and len(per_source) != sources:
        raise InputError(f"one tuple of names per source: expected {sources}, got {len(per_source)}", "fields")
    reserved = ("job", "source", "ts", "watermark", "end", "seq")
    for names in per_source:
        if not names or not all(isinstance(n, str) and n and n not in reserved for n in names):
            raise InputError(f"expected non-empty column names other than {', '.join(reserved)}, got {names!r}",
                             "fields")
    return per_source


def _ship(op: OPlus) -> bytes:
    """``op`` pickled by value (its module's functions travel with it)."""
    from pyspark import cloudpickle as pickler

    cloudpickle: Any = pickler  # untyped
    modules = {sys.modules.get(getattr(f, "__module__", "") or "") for f in
               (op.keys, op.update, op.output, op.slide, op.empty, op.is_empty)}
    registered = [m for m in modules if m is not None and m.__name__ not in ("builtins", "spec.oplus.model")
                  and not m.__name__.startswith(("spec.", "spark_impl."))]
    for module in registered:
        cloudpickle.register_pickle_by_value(module)
    try:
        data: bytes = cloudpickle.dumps(op)
    except Exception as error:  # noqa: BLE001 - anything the user's objects refuse
        raise InputError(f"operator {op.name!r} cannot be shipped to the workers ({type(error).__name__}: {error}); "
                         "give it as 'file.py:NAME' instead", "operator") from None
    finally:
        for module in registered:
            cloudpickle.unregister_pickle_by_value(module)
    return data


# ---------------------------------------------------------------- processing (inside a task)

def process_key(op: OPlus, key: Any, state: list[Any] | None, arrived: list[Pending], watermark: float,
                emitted: list[tuple[int, Any, Any]], off_by_one: bool = False) -> list[Any] | None:
    """One key's micro-batch (module docstring): ``state`` is ``[pending, windows, last_ts]``
    (None: a new key); returns the new state (None: nothing left). ``off_by_one``: the seeded
    fault ``window-off-by-one`` (:mod:`spark_impl.faults`; off unless injected): a tuple at
    ``L + WS`` also falls in instance ``L`` (WT multi: ``L`` is among its instances; WT single:
    the chain's instance ``L`` is not yet expired when the tuple is applied)."""
    pending, windows, last_ts = state if state is not None else ([], None, None)
    pending = pending + arrived
    ready = sorted((p for p in pending if p[0] < watermark), key=_order)
    pending = [p for p in pending if not p[0] < watermark]
    spec = op.windows
    if op.window_type is WindowType.MULTI:
        sets: dict[int, tuple[Any, ...]] = dict(windows or {})
        for ts, source, seq, payload, inp in ready:
            t = StreamTuple(ts, source, seq, payload, inp)
            for left in range(_earliest(spec, ts, off_by_one), spec.latest_left(ts) + 1, spec.WA):
                new, payloads = op.update(WindowSet(left, key, sets.get(left, op.empty_states())), t)
                sets[left] = tuple(new)
                emitted.extend((spec.right_boundary(left), key, p) for p in payloads)
        for left in sorted(sets):
            if spec.expired(left, watermark):
                emitted.extend((spec.right_boundary(left), key, p) for p in op.output(WindowSet(left, key, sets[left])))
                del sets[left]
        new_windows: Any = sets or None
    else:
        chain: WindowSet | None = None if windows is None else WindowSet(windows[0], key, windows[1])
        for ts, source, seq, payload, inp in ready:
            # the seeded fault: instance L still open for a tuple at L + WS (right boundary counted in)
            chain = _drain(op, key, chain, ts - 1 if off_by_one else ts, last_ts, emitted)
            left = _earliest(spec, ts, off_by_one)
            current = chain if chain is not None else WindowSet(left, key, op.empty_states())
            new, payloads = op.update(current, StreamTuple(ts, source, seq, payload, inp))
            chain = WindowSet(current.left, key, tuple(new))
            emitted.extend((spec.right_boundary(current.left), key, p) for p in payloads)
            last_ts = ts
        chain = _drain(op, key, chain, watermark, last_ts, emitted)
        new_windows = None if chain is None else (chain.left, chain.states)
    if not pending and new_windows is None:
        return None
    return [pending, new_windows, last_ts]


def _earliest(spec: WindowSpec, ts: int, off_by_one: bool) -> int:
    """earliestWinL(ts); under the seeded fault ``window-off-by-one`` that of ``ts - 1`` (the
    right boundary counted in: a tuple at ``L + WS`` falls in ``L`` too)."""
    return spec.earliest_left(ts - 1 if off_by_one else ts)


def _order(item: Pending) -> tuple[int, int, int, str]:
    """The tuple buffer order, ties broken by the payload (the same in every process)."""
    return item[0], item[1], item[2], repr(item[3])


def _drain(op: OPlus, key: Any, chain: WindowSet | None, watermark: float, last_ts: int | None,
           emitted: list[tuple[int, Any, Any]]) -> WindowSet | None:
    """WT single: output (f_O) and shift (f_S) the chain while its instance is expired."""
    spec = op.windows
    while chain is not None and spec.expired(chain.left, watermark):
        if last_ts is not None and chain.left > last_ts and watermark == float("inf"):
            raise InputError(f"operator {op.name!r}: key {key!r} still has state at {chain.left} after its last "
                             f"tuple ({last_ts}) became stale (f_S / is_empty never empty the chain)", "operator")
        emitted.extend((spec.right_boundary(chain.left), key, p) for p in op.output(chain))
        shifted = chain.left + spec.WA
        states = tuple(op.slide(chain, shifted))
        chain = None if op.all_empty(states) else WindowSet(shifted, key, states)
    return chain


def run_user(index: int, keys: dict[Any, Any], items: list[tuple[int, int, int, Mapping[str, Any]]], user: UserOperator,
             parallelism: int, watermark: float, route: Any, emitted: list[tuple[int, Any, Any]],
             off_by_one: bool = False) -> None:
    """Instance ``index``'s micro-batch of a user job: ``items`` (``(ts, source, seq, fields)``,
    routed to it SN style) join the pending tuples of every key of f_MK it owns (``route(key,
    parallelism) == index``); then every key it holds runs :func:`process_key` (``keys``: key
    -> state, updated in place; ``off_by_one``: the seeded fault, :func:`process_key`)."""
    op = user.operator()
    arrived: dict[Any, list[Pending]] = {}
    for ts, source, seq, values in items:
        t = user.stream_tuple(ts, source, seq, values)
        for key in op.keys(t):
            if route(key, parallelism) == index:
                arrived.setdefault(key, []).append((ts, source, seq, t.payload, t.input))
    for key in sorted(set(keys) | set(arrived), key=repr):
        new = process_key(op, key, keys.get(key), arrived.get(key, []), watermark, emitted, off_by_one)
        if new is None:
            keys.pop(key, None)
        else:
            keys[key] = new
