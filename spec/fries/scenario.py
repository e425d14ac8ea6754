"""Reconfiguration scenarios: a language-neutral description of a run (Fries §2.2, §7.2).

A *scenario* fixes everything that decides a run's meaning: the dataflow, each operator's
computation function, the source tuples, the reconfigurations (new function + state
transformation per reconfigured operator, Fries Def. 2.1), and the workers of each operator.
Timing (delays, stragglers, control-message delays, restarts) is kept apart in
:class:`Timing`: it changes *which* serial order a correct run is equivalent to, never what a
serial order computes.

The reference simulator, the Spark executor and the conformance vectors all read this format,
so the catalogue of functions is closed and declarative (no code in JSON): it lives in
:mod:`spec.fries.catalogue` (``map``, ``filter``, ``fanout``, ``replicate``, ``sum`` and the
order-sensitive ``fold`` and ``digest``), re-exported here.

Every non-source operator keeps one integer of state per key. With the commutative functions
(``map``, ``filter``, ``fanout``, ``replicate``, ``sum``: the state is the sum of the input
values) the order of *data* transactions never changes outputs or final states; what a run
computes is decided by which data transactions each reconfigured operator processed before its
update - exactly what conflict-serializability constrains (Def. 4.6-4.9). A non-serializable
run (a transaction that saw the old function at one operator and the new one at another)
produces outputs or states that no serial order produces. The order-sensitive functions
(``fold``, ``digest``) make the per-key processing order visible too; what a consistent run
must then satisfy beyond conflict-serializability is :mod:`spec.fries.consistency`.

Routing: an operator with children c_0..c_{n-1} (edges in declaration order) sends an output
tuple with key k to c_{k mod n}; the i-th copy of ``fanout`` goes to c_{(k+i) mod n};
``replicate`` sends to every child. An operator with no children is a *sink*: what it emits
is the scenario's output, recorded as (sink, transaction, key, value). Source tuples go to
their source operator's children by the same rule; the source itself keeps no state.

Workers (§7.2): ``parallelism[O] = p`` splits O into objects ``O#0 .. O#p-1``; key k lives on
``O#(k mod p)`` (hash partitioning). With p = 1 the object is named ``O``. Schedules (per-object
logs, :mod:`spec.fries.schedule`) name these objects.

Transaction ids: the i-th tuple (from 0) of source S is ``"S:i"``; the j-th reconfiguration
(from 1) is ``"R1"``, ``"R2"``, ...

JSON form (see docs/fries.md)::

    {"dataflow": {DAG.json},
     "functions": {"B": {"op": "map", "mul": 2, "add": 1}, ...},
     "parallelism": {"B": 2},                       # optional, default 1
     "sources": {"A": [{"key": 1, "value": 5}, ...]},
     "reconfigurations": [{"at": 40, "updates": {"B": {"function": {...},
                                                         "state": {"mul": 2, "add": 0}}}}],
     "timing": {...}}                               # optional, see Timing

Sizes are bounded before any work starts (bad input otherwise): ``parallelism`` at most
:data:`MAX_PARALLELISM` (1024) per operator, ``fanout`` ``copies`` at most :data:`MAX_COPIES`
(1000), and the records a serial run may deliver to operators (each output counted on every
out edge, fan-outs multiplying along a path) at most :data:`MAX_RECORDS` (10^6).

``at`` is the number of source tuples ingested (all sources, in the interleaving of
:func:`ingestion_order`) before the request is made.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from spec.errors import InputError
from spec.fries.catalogue import OPS_FOR_KIND as OPS_FOR_KIND
from spec.fries.catalogue import PARAMS, flush, step
from spec.fries.catalogue import Function as Function
from spec.fries.catalogue import StateTransform as StateTransform
from spec.fries.catalogue import emit as emit
from spec.fries.catalogue import order_sensitive as order_sensitive
from spec.fries.dataflow import Dataflow, OperatorKind
from spec.fries.schedule import Operation, Schedule
from spec.jsonio import (
    expect_int,
    expect_list,
    expect_object,
    expect_str,
    json_type,
    reject_unknown_keys,
)

@dataclass(frozen=True)
class Update:
    """The function update u(O) of one operator: the new function and the state transform."""

    function: Function
    state: StateTransform


@dataclass(frozen=True)
class Reconfiguration:
    """A reconfiguration request (Fries Def. 2.1): made after ``at`` source tuples."""

    at: int
    updates: Mapping[str, Update]


@dataclass(frozen=True)
class SourceTuple:
    """A source tuple: its transaction id, key and value."""

    txn: str
    key: int
    value: int


@dataclass(frozen=True)
class Timing:
    """Test hooks that change *when* things happen, never what a serial order computes.

    Units are abstract time units for the simulator and milliseconds for Spark. All optional.
    ``seed`` drives every random choice; ``ingest_interval`` is the time between source tuples;
    ``operator_cost`` the processing time per tuple by operator; ``channel_delay`` a [lo, hi]
    range of per-tuple channel delays (FIFO channels: delays never reorder one channel);
    ``fcm_delay`` a [lo, hi] range of control-message delivery delays; ``stragglers`` maps an
    object (worker) to a cost multiplier; ``restarts`` lists source-tuple counts after which
    the run stops and restarts from its last checkpoint. ``reorder_bound`` b >= 0 (source
    reordering within a watermark bound): sources ingest in
    :func:`spec.fries.reorder.reordered_ingestion` order, a seeded permutation of
    :func:`ingestion_order` that moves no tuple more than b positions; transaction ids are
    unchanged, and ``at`` / ``restarts`` still count ingested tuples."""

    seed: int = 0
    ingest_interval: float = 1.0
    operator_cost: Mapping[str, float] = field(default_factory=dict)
    channel_delay: tuple[float, float] = (0.0, 0.0)
    fcm_delay: tuple[float, float] = (0.0, 0.0)
    stragglers: Mapping[str, float] = field(default_factory=dict)
    restarts: tuple[int, ...] = ()
    reorder_bound: int = 0


class WorkerNaming:
    """Mixin for anything with a ``parallelism`` map (operator -> workers, default 1): the
    §7.2 object names, shared by :class:`Scenario` and the executors' job types so every
    executor names schedule objects exactly alike."""

    parallelism: Mapping[str, int]

    def workers(self, operator: str) -> int:
        """Number of workers of ``operator`` (default 1)."""
        return self.parallelism.get(operator, 1)

    def object_of(self, operator: str, key: int) -> str:
        """The object (worker) holding ``key``'s state at ``operator`` (§7.2)."""
        return object_of(operator, key, self.workers(operator))

    def objects(self, operator: str) -> tuple[str, ...]:
        """All objects (workers) of ``operator``."""
        return objects_of(operator, self.workers(operator))


@dataclass(frozen=True)
class Scenario(WorkerNaming):
    """A validated reconfiguration scenario (see the module docstring)."""

    dataflow: Dataflow
    functions: Mapping[str, Function]
    sources: Mapping[str, tuple[SourceTuple, ...]]
    reconfigurations: tuple[Reconfiguration, ...] = ()
    parallelism: Mapping[str, int] = field(default_factory=dict)
    timing: Timing = field(default_factory=Timing)



# --- object naming (§7.2) --------------------------------------------------------------------


def object_of(operator: str, key: int, workers: int) -> str:
    """The object holding ``key`` at ``operator`` with ``workers`` workers: ``O`` when p = 1,
    else ``O#(key mod p)`` (hash partitioning; the names schedules use). Module-level so every
    executor (the simulator, spark_impl) names objects exactly alike."""
    return operator if workers == 1 else f"{operator}#{key % workers}"


def objects_of(operator: str, workers: int) -> tuple[str, ...]:
    """All objects of ``operator`` with ``workers`` workers, in worker order."""
    return (operator,) if workers == 1 else tuple(f"{operator}#{i}" for i in range(workers))


def operator_of(obj: str) -> str:
    """The operator an object (``"O"`` or ``"O#i"``) belongs to."""
    return obj.split("#", 1)[0]


# --- semantics -------------------------------------------------------------------------------


def route_source(key: int, children: Sequence[str]) -> list[str]:
    """The child that receives a source tuple with ``key`` (none if the source is a sink)."""
    return [children[key % len(children)]] if children else []


def ingestion_order(scenario: Scenario) -> tuple[SourceTuple, ...]:
    """All source tuples in ingestion order: round-robin over sources in declaration order
    (the i-th tuples of every source, then the (i+1)-th, ...)."""
    lists = list(scenario.sources.values())
    order: list[SourceTuple] = []
    for i in range(max((len(tuples) for tuples in lists), default=0)):
        order.extend(tuples[i] for tuples in lists if i < len(tuples))
    return tuple(order)


Output = tuple[str, str, int, int]
"""One output record: (sink operator, transaction id, key, value)."""

Senders = Mapping[str, tuple[str | None, ...]]
"""Per object, parallel to its schedule log: the object that sent the tuple each data
operation processed (``None`` for an update, a flush or when unknown)."""


@dataclass(frozen=True)
class SerialResult:
    """What a serial execution computes: the output multiset and the final state of every
    (operator, key); ``schedule`` / ``senders`` are the per-object logs of that serial run
    (its serial schedule, Def. 4.7, and the sender of every data operation); equality compares
    outputs and states only."""

    outputs: Counter[Output]
    states: Mapping[tuple[str, int], int]
    schedule: Schedule = field(default_factory=lambda: Schedule({}), compare=False)
    senders: Senders = field(default_factory=dict, compare=False)


def serial_execution(scenario: Scenario, order: Sequence[str]) -> SerialResult:
    """Run the transactions of ``scenario`` one at a time in ``order`` (Fries Def. 4.9's
    serial schedule): each data transaction processes its whole scope before the next starts;
    a reconfiguration ``Rj`` applies all its updates between two transactions. Within one
    transaction tuples are processed first-in first-out (breadth first), so every channel
    delivers in send order (what :mod:`spec.fries.consistency` requires of every run).

    ``order`` must list every transaction id exactly once (data and reconfiguration)."""
    flow = scenario.dataflow
    by_txn = {t.txn: (source, t) for source, tuples in scenario.sources.items() for t in tuples}
    updates = {f"R{j + 1}": r for j, r in enumerate(scenario.reconfigurations)}
    expected = set(by_txn) | set(updates)
    if sorted(order) != sorted(expected):
        missing = sorted(expected - set(order))
        extra = sorted(set(order) - expected)
        raise InputError(f"serial order must list every transaction once (missing {missing}, extra {extra})")
    functions = dict(scenario.functions)
    state: dict[tuple[str, int], int] = {}
    outputs: Counter[Output] = Counter()
    logs: dict[str, list[tuple[Operation, str | None]]] = {
        obj: [] for op in flow.names if op in scenario.functions for obj in scenario.objects(op)}

    def propagate(pending: deque[tuple[str, str, int, int]], txn: str) -> None:
        """Process tuples (sender object, receiver, key, value) of ``txn`` and everything
        they derive, first in first out."""
        while pending:
            sender, operator, key, value = pending.popleft()
            obj = scenario.object_of(operator, key)
            logs[obj].append((Operation(txn), sender))
            state[(operator, key)], emitted = step(functions[operator], state.get((operator, key)), key, value,
                                                   flow.children(operator))
            for child, k, v in emitted:
                if child:
                    pending.append((obj, child, k, v))
                else:
                    outputs[(operator, txn, k, v)] += 1
    for txn in order:
        if txn in updates:
            for operator, update in updates[txn].updates.items():
                functions[operator] = update.function
                for obj in scenario.objects(operator):
                    logs[obj].append((Operation(txn, update=True), None))
                for (op, key), value in list(state.items()):
                    if op == operator:
                        state[(op, key)] = update.state.apply(value)
            continue
        source, tup = by_txn[txn]
        sender = scenario.object_of(source, tup.key)
        propagate(deque((sender, child, tup.key, tup.value) for child in route_source(tup.key, flow.children(source))),
                  txn)
    # End of input (§7.1): blocking operators flush in topological order, one transaction
    # "O:final" each; their tuples flow downstream like any other (a later blocking
    # operator accumulates them before its own flush).
    for operator in flow.topological_order():
        if flow.kind(operator) is not OperatorKind.BLOCKING:
            continue
        txn = f"{operator}:final"
        pending: deque[tuple[str, str, int, int]] = deque()
        for key in sorted(key for (op, key) in state if op == operator):
            obj = scenario.object_of(operator, key)
            for child, k, v in flush(functions[operator], state[(operator, key)], key, flow.children(operator)):
                if child:
                    pending.append((obj, child, k, v))
                else:
                    outputs[(operator, txn, k, v)] += 1
        propagate(pending, txn)
    schedule = Schedule({obj: tuple(op for op, _ in log) for obj, log in logs.items()})
    return SerialResult(outputs, state, schedule, {obj: tuple(s for _, s in log) for obj, log in logs.items()})


# --- JSON ------------------------------------------------------------------------------------


def scenario_from_json(value: Any, where: str = "scenario") -> Scenario:
    """Parse and validate a scenario; raise :class:`InputError` with the JSON path."""
    try:
        return _scenario_from_json(value)
    except InputError as error:
        raise error.located(where) from None


def _scenario_from_json(value: Any) -> Scenario:
    obj = expect_object(value, "top level")
    reject_unknown_keys(
        obj, {"dataflow", "functions", "sources", "reconfigurations", "parallelism", "timing"}, "top level"
    )
    for required in ("dataflow", "functions", "sources"):
        if required not in obj:
            raise InputError(f"missing field {required!r}", "top level")
    flow = Dataflow.from_json(obj["dataflow"], "dataflow")
    functions = {}
    raw_functions = expect_object(obj["functions"], "functions")
    for name in flow.names:
        kind = flow.kind(name)
        if kind is OperatorKind.SOURCE:
            if name in raw_functions:
                raise InputError(f"source {name!r} takes no function", f"functions.{name}")
            continue
        if name not in raw_functions:
            raise InputError(f"operator {name!r} has no function", "functions")
        functions[name] = _function_from_json(raw_functions[name], kind, f"functions.{name}")
    for name in raw_functions:
        if name not in flow:
            raise InputError(f"function for unknown operator {name!r}", "functions")
    sources: dict[str, tuple[SourceTuple, ...]] = {}
    raw_sources = expect_object(obj["sources"], "sources")
    for name, raw_list in raw_sources.items():
        if name not in flow or flow.kind(name) is not OperatorKind.SOURCE:
            raise InputError(f"{name!r} is not a source operator of the dataflow", "sources")
        items = expect_list(raw_list, f"sources.{name}")
        sources[name] = tuple(
            _source_tuple(item, f"{name}:{i}", f"sources.{name}[{i}]") for i, item in enumerate(items)
        )
    reconfigurations = tuple(
        _reconfiguration_from_json(item, flow, f"reconfigurations[{i}]")
        for i, item in enumerate(expect_list(obj.get("reconfigurations", []), "reconfigurations"))
    )
    parallelism: dict[str, int] = {}
    for name, raw in expect_object(obj.get("parallelism", {}), "parallelism").items():
        if name not in flow:
            raise InputError(f"parallelism for unknown operator {name!r}", "parallelism")
        p = expect_int(raw, f"parallelism.{name}")
        if not 1 <= p <= MAX_PARALLELISM:
            raise InputError(f"parallelism must be in 1..{MAX_PARALLELISM}, got {p}", f"parallelism.{name}")
        parallelism[name] = p
    timing = timing_from_json(obj.get("timing", {}))
    _check_records(flow, functions, sources, reconfigurations)
    return Scenario(flow, functions, sources, reconfigurations, parallelism, timing)


#: The most workers of one operator (``parallelism``): every executor creates each object.
MAX_PARALLELISM = 1024
#: The most copies one ``fanout`` emits per tuple.
MAX_COPIES = 1000
#: The most records a scenario may deliver to its operators in a serial run (bounded from above
#: by :func:`_check_records`): a chain of fan-outs multiplies, so each factor bounded is not
#: enough.
MAX_RECORDS = 1_000_000


def _check_records(flow: Dataflow, functions: Mapping[str, Function], sources: Mapping[str, tuple[SourceTuple, ...]],
                   reconfigurations: tuple[Reconfiguration, ...]) -> None:
    """InputError when the records a serial run delivers may exceed :data:`MAX_RECORDS`: per
    operator, the sum over its parents of what each emits, each parent's output sent on every
    out edge, a fan-out multiplying by the most copies any version of its function emits."""
    factor: dict[str, int] = {name: function.param("copies") if function.op == "fanout" else 1
                              for name, function in functions.items()}
    for request in reconfigurations:
        for name, update in request.updates.items():
            if update.function.op == "fanout":
                factor[name] = max(factor.get(name, 1), update.function.param("copies"))
    emitted: dict[str, int] = {}
    total = 0
    for name in flow.topological_order():
        if flow.kind(name) is OperatorKind.SOURCE:
            emitted[name] = len(sources.get(name, ()))
            continue
        received = sum(emitted.get(parent, 0) for parent in flow.parents(name))
        total += received
        if total > MAX_RECORDS:
            raise InputError(f"the scenario may deliver more than {MAX_RECORDS:,} records to its operators "
                             f"(at {name!r}; fan-out copies multiply along a path)", "functions")
        emitted[name] = received * factor.get(name, 1)


def _function_from_json(value: Any, kind: OperatorKind, where: str) -> Function:
    obj = expect_object(value, where)
    op = expect_str(obj.get("op"), f"{where}.op")
    if op not in PARAMS:
        raise InputError(f"unknown function op {op!r} (expected one of {sorted(PARAMS)})", where)
    if op not in OPS_FOR_KIND.get(kind, frozenset()):
        raise InputError(f"op {op!r} does not fit a {kind.value} operator", where)
    reject_unknown_keys(obj, {"op", *PARAMS[op]}, where)
    params = []
    for name in PARAMS[op]:
        if name not in obj:
            raise InputError(f"op {op!r} needs parameter {name!r}", where)
        params.append((name, expect_int(obj[name], f"{where}.{name}")))
    function = Function(op, tuple(params))
    if op == "filter" and function.param("mod") <= 0:
        raise InputError("filter needs mod >= 1", where)
    if op == "fanout" and not 0 <= function.param("copies") <= MAX_COPIES:
        raise InputError(f"fanout needs copies in 0..{MAX_COPIES}, got {function.param('copies')}", f"{where}.copies")
    return function


def _source_tuple(value: Any, txn: str, where: str) -> SourceTuple:
    obj = expect_object(value, where)
    reject_unknown_keys(obj, {"key", "value"}, where)
    return SourceTuple(txn, expect_int(obj.get("key"), f"{where}.key"), expect_int(obj.get("value"), f"{where}.value"))


def _reconfiguration_from_json(value: Any, flow: Dataflow, where: str) -> Reconfiguration:
    obj = expect_object(value, where)
    reject_unknown_keys(obj, {"at", "updates"}, where)
    at = expect_int(obj.get("at"), f"{where}.at")
    if at < 0:
        raise InputError(f"'at' must be >= 0, got {at}", f"{where}.at")
    raw_updates = expect_object(obj.get("updates"), f"{where}.updates")
    if not raw_updates:
        raise InputError("a reconfiguration updates at least one operator", f"{where}.updates")
    updates = {}
    for name, raw in raw_updates.items():
        at_where = f"{where}.updates.{name}"
        if name not in flow:
            raise InputError(f"reconfiguration names unknown operator {name!r}", f"{where}.updates")
        if flow.kind(name) is OperatorKind.SOURCE:
            raise InputError(f"source {name!r} cannot be reconfigured", f"{where}.updates")
        entry = expect_object(raw, at_where)
        reject_unknown_keys(entry, {"function", "state"}, at_where)
        function = _function_from_json(entry.get("function"), flow.kind(name), f"{at_where}.function")
        state_obj = expect_object(entry.get("state", {}), f"{at_where}.state")
        reject_unknown_keys(state_obj, {"mul", "add"}, f"{at_where}.state")
        transform = StateTransform(
            expect_int(state_obj.get("mul", 1), f"{at_where}.state.mul"),
            expect_int(state_obj.get("add", 0), f"{at_where}.state.add"),
        )
        updates[name] = Update(function, transform)
    return Reconfiguration(at, updates)


def timing_from_json(value: Any) -> Timing:
    """The ``timing`` object of a scenario file (every field optional, unknown ones refused
    with their path), as a :class:`Timing`."""
    obj = expect_object(value, "timing")
    allowed = {"seed", "ingest_interval", "operator_cost", "channel_delay", "fcm_delay", "stragglers", "restarts",
               "reorder_bound"}
    reject_unknown_keys(obj, allowed, "timing")

    def number(raw: Any, where: str) -> float:
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw < 0:
            raise InputError(f"expected a non-negative number, got {json_type(raw)}", where)
        return float(raw)

    def interval(raw: Any, where: str) -> tuple[float, float]:
        pair = expect_list(raw, where)
        if len(pair) != 2:
            raise InputError("expected [lo, hi]", where)
        lo, hi = number(pair[0], f"{where}[0]"), number(pair[1], f"{where}[1]")
        if lo > hi:
            raise InputError(f"lo {lo} > hi {hi}", where)
        return lo, hi

    return Timing(
        seed=expect_int(obj.get("seed", 0), "timing.seed"),
        ingest_interval=number(obj.get("ingest_interval", 1.0), "timing.ingest_interval"),
        operator_cost={k: number(v, f"timing.operator_cost.{k}")
                       for k, v in expect_object(obj.get("operator_cost", {}), "timing.operator_cost").items()},
        channel_delay=interval(obj.get("channel_delay", [0, 0]), "timing.channel_delay"),
        fcm_delay=interval(obj.get("fcm_delay", [0, 0]), "timing.fcm_delay"),
        stragglers={k: number(v, f"timing.stragglers.{k}")
                    for k, v in expect_object(obj.get("stragglers", {}), "timing.stragglers").items()},
        restarts=tuple(expect_int(v, f"timing.restarts[{i}]")
                       for i, v in enumerate(expect_list(obj.get("restarts", []), "timing.restarts"))),
        reorder_bound=_non_negative_int(obj.get("reorder_bound", 0), "timing.reorder_bound"),
    )


def _non_negative_int(raw: Any, where: str) -> int:
    number = expect_int(raw, where)
    if number < 0:
        raise InputError(f"expected a non-negative integer, got {number}", where)
    return number
