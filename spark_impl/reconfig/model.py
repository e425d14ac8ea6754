"""The executor's typed model of a job: operators as Python functions with state, sources,
reconfiguration requests (Fries §2.1-2.2, Def. 2.1).

An *operator* is ``(kind, function)`` with ``function(state, key, value) -> (state, outputs)``:
``state`` is the operator's state for ``key`` (``None`` before the key's first tuple), and
``outputs`` lists ``(receiver, key, value)`` triples (receiver ``""`` at a sink). Keys are
of any type :mod:`spark_impl.keys` routes stably (strings, numbers, tuples): an integer key
``k`` of an operator with ``p`` workers lives on worker ``k mod p`` (Fries §7.2, the same hash
partitioning as :mod:`spec.fries.scenario`), any other key on ``stable_hash(k) mod p``. A blocking operator also has
``flush(state, key) -> outputs``, called once per key at end of input (Fries §7.1).

A *reconfiguration request* maps operators to :class:`Update` = new logic + state
transformation ``T_O`` (Def. 2.1). The scenario catalogue of :mod:`spec.fries.scenario` is one
instance: :class:`CatalogueLogic` wraps a catalogue :class:`~spec.fries.scenario.Function`
and calls the spec's own :func:`~spec.fries.catalogue.step`, so the executor computes exactly
what the spec's serial semantics computes for one tuple. :func:`user_operator` adapts a plain
user function ``f(state, key, value) -> (state, [(key, value), ...])`` with the default
routing (hash on the key; a replicate operator sends each output to every child).

Everything here is pickled to the Spark executors (with cloudpickle for user functions).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

from spec.fries.dataflow import Dataflow, OperatorKind
from spec.fries.catalogue import flush, step
from spec.fries.scenario import Function, StateTransform, WorkerNaming
from spark_impl.keys import route
from spark_impl.lru import LRU
from spark_impl.values import normalize

Emitted = list[tuple[str, Any, Any]]
"""What one operator call emits: (receiving operator, key, value); receiver "" = sink output."""


class OperatorLogic(Protocol):
    """The computation function of one operator (Fries §2.1: f_O(t, s) -> (outputs, s'))."""

    def process(self, state: Any, key: Any, value: Any) -> tuple[Any, Emitted]:
        """Process one input tuple; return the key's new state and the outputs."""
        ...

    def flush(self, state: Any, key: Any) -> Emitted:
        """End of input for a blocking operator: the outputs for ``key`` (others: [])."""
        ...


@dataclass(frozen=True)
class CatalogueLogic:
    """A function of the closed scenario catalogue (:mod:`spec.fries.catalogue`: the sum state
    of the commutative functions, the affine fold of the order-sensitive ones)."""

    function: Function
    children: tuple[str, ...]

    def process(self, state: Any, key: Any, value: Any) -> tuple[Any, Emitted]:
        """Spec semantics for one tuple (:func:`spec.fries.catalogue.step`)."""
        new_state, emitted = step(self.function, None if state is None else int(state), int(key), int(value),
                                  self.children)
        return new_state, list(emitted)

    def flush(self, state: Any, key: Any) -> Emitted:
        """End of input (:func:`spec.fries.catalogue.flush`: ``sum`` and ``digest``)."""
        return list(flush(self.function, None if state is None else int(state), int(key), self.children))


@dataclass(frozen=True)
class CatalogueTransform:
    """The catalogue's state transformation ``s -> mul*s + add`` (applied to existing keys)."""

    transform: StateTransform

    def __call__(self, state: Any) -> Any:
        return self.transform.apply(0 if state is None else int(state))


UserFunction = Callable[[Any, Any, Any], tuple[Any, Sequence[tuple[Any, Any]]]]
UserFlush = Callable[[Any, Any], Sequence[tuple[Any, Any]]]


@dataclass(frozen=True)
class UserLogic:
    """A user function with the default routing (see the module docstring)."""

    function: UserFunction
    kind: OperatorKind
    children: tuple[str, ...]
    final: UserFlush | None = None

    def _route(self, pairs: Sequence[tuple[Any, Any]]) -> Emitted:
        if not self.children:
            return [("", k, v) for k, v in pairs]
        if self.kind is OperatorKind.REPLICATE:
            return [(child, k, v) for k, v in pairs for child in self.children]
        n = len(self.children)
        return [(self.children[route(k, n)], k, v) for k, v in pairs]

    def process(self, state: Any, key: Any, value: Any) -> tuple[Any, Emitted]:
        """Call the user function and route its (key, value) outputs."""
        new_state, pairs = self.function(state, key, value)
        if self.kind is OperatorKind.BLOCKING:
            return new_state, []
        return new_state, self._route(list(pairs))

    def flush(self, state: Any, key: Any) -> Emitted:
        """Call the user's flush (blocking operators only)."""
        if self.final is None or self.kind is not OperatorKind.BLOCKING:
            return []
        return self._route(list(self.final(state, key)))


@dataclass(frozen=True)
class UserOperator:
    """What a user declares per operator: its kind, function and (blocking) flush."""

    kind: OperatorKind
    function: UserFunction
    flush: UserFlush | None = None


@dataclass(frozen=True)
class Update:
    """u(O) of Def. 2.1: the operator's new logic and the state transformation T_O."""

    logic: OperatorLogic
    transform: Callable[[Any], Any]


@dataclass(frozen=True)
class Request:
    """A reconfiguration request R = {(O, (f'_O, T_O))} (Def. 2.1)."""

    updates: Mapping[str, Update]

    @property
    def operators(self) -> frozenset[str]:
        """The reconfigured operators."""
        return frozenset(self.updates)


@dataclass(frozen=True)
class PlannedRequest:
    """A request a scenario makes after ``at`` source tuples were ingested."""

    at: int
    request: Request


class Source(Protocol):
    """A replayable source: tuple ``i`` (in ingestion order) is always the same, so a restart
    from a checkpoint re-reads exactly what the checkpoint's offset says (exactly-once)."""

    def count(self) -> int:
        """Number of tuples (the stream ends after them)."""
        ...

    def get(self, index: int) -> tuple[str, str, Any, Any]:
        """Tuple ``index``: (source operator, transaction id, key, value)."""
        ...


@dataclass(frozen=True)
class ListSource:
    """Tuples given as a list (the scenario sources in :func:`ingestion_order`)."""

    tuples: tuple[tuple[str, str, Any, Any], ...]

    def count(self) -> int:
        """Number of tuples."""
        return len(self.tuples)

    def get(self, index: int) -> tuple[str, str, Any, Any]:
        """Tuple ``index``."""
        return self.tuples[index]


@dataclass(frozen=True)
class GeneratedSource:
    """Tuples computed from their index by a pure function (benchmarks, the demo): nothing is
    shipped from the driver but the function."""

    source: str
    n: int
    make: Callable[[int], tuple[Any, Any]]

    def count(self) -> int:
        """Number of tuples."""
        return self.n

    def get(self, index: int) -> tuple[str, str, Any, Any]:
        """Tuple ``index`` with transaction id ``source:index``."""
        key, value = self.make(index)
        return self.source, f"{self.source}:{index}", key, value


_DIRECTORY_CACHE: LRU[tuple[str, str], list[Any]] = LRU(64)
"""Parsed files of :class:`DirectorySource` (per process, bounded: a month-long stream)."""
_DIRECTORY_LISTING: dict[str, list[str]] = {}


@dataclass(frozen=True)
class DirectorySource:
    """A growing stream from JSON-lines files in ``path`` (storage every executor sees): each
    line is ``[key, value]``, read in the documented form of :mod:`spark_impl.values` (JSON
    arrays as tuples, objects as sorted pairs, so any of them can be a key); files are read in
    name order and must be complete when they appear (write elsewhere, then rename into
    ``path``). ``count()`` grows as files arrive;
    tuple ``i`` never changes, so the source stays replayable. Transaction ids are
    ``source:i``."""

    source: str
    path: str

    def _lines(self, name: str) -> list[Any]:
        def load() -> list[Any]:
            with open(os.path.join(self.path, name), encoding="utf-8") as handle:
                return [json.loads(line) for line in handle if line.strip()]

        return _DIRECTORY_CACHE.get_or_load((self.path, name), load)

    def _files(self, refresh: bool) -> list[str]:
        listing = _DIRECTORY_LISTING.get(self.path)
        if refresh or listing is None:
            listing = _DIRECTORY_LISTING[self.path] = sorted(n for n in os.listdir(self.path) if n.endswith(".jsonl"))
        return listing

    def count(self) -> int:
        """Tuples in the files present now."""
        return sum(len(self._lines(name)) for name in self._files(refresh=True))

    def get(self, index: int) -> tuple[str, str, Any, Any]:
        """Tuple ``index`` (in file-name order, then line order)."""
        for refresh in (False, True):
            rest = index
            for name in self._files(refresh):
                lines = self._lines(name)
                if rest < len(lines):
                    key, value = lines[rest]
                    return self.source, f"{self.source}:{index}", normalize(key), normalize(value)
                rest -= len(lines)
        raise IndexError(f"tuple {index} is not in {self.path} yet")


@dataclass(frozen=True)
class Timing:
    """Test hooks and pacing, all deterministic from ``seed`` (milliseconds).

    ``operator_cost``: processing time per tuple by operator; ``stragglers``: per object cost
    multiplier; ``fcm_delay``: [lo, hi] delivery delay of a control message to each object;
    ``restarts``: source-tuple counts after which the job crashes (the batch that reaches the
    count runs but is never committed) and recovers from its last checkpoint;
    ``batch_size``: source tuples per micro-batch."""

    seed: int = 0
    operator_cost: Mapping[str, float] = field(default_factory=dict)
    stragglers: Mapping[str, float] = field(default_factory=dict)
    fcm_delay: tuple[float, float] = (0.0, 0.0)
    restarts: tuple[int, ...] = ()
    batch_size: int = 8


@dataclass(frozen=True)
class Job(WorkerNaming):
    """One dataflow to run: DAG, per-operator logic, workers, source, planned requests.
    ``unbounded``: the stream never ends (no end-of-input flush); the job waits for more
    source tuples instead (run it with :meth:`~spark_impl.reconfig.driver.Executor.step`)."""

    dataflow: Dataflow
    logic: Mapping[str, OperatorLogic]
    source: Source
    parallelism: Mapping[str, int] = field(default_factory=dict)
    planned: tuple[PlannedRequest, ...] = ()
    timing: Timing = field(default_factory=Timing)
    trace: bool = True
    unbounded: bool = False

    def object_of(self, operator: str, key: Any) -> str:
        """The object holding ``key`` at ``operator``: :func:`spark_impl.keys.route` (for an
        integer key the same as :func:`spec.fries.scenario.object_of`)."""
        workers = self.workers(operator)
        return operator if workers == 1 else f"{operator}#{route(key, workers)}"


def user_job(dataflow: Dataflow, operators: Mapping[str, UserOperator], source: Source,
             **options: Any) -> Job:
    """A :class:`Job` from user operators (routing by :class:`UserLogic`)."""
    logic: dict[str, OperatorLogic] = {}
    for name in dataflow.names:
        if dataflow.kind(name) is OperatorKind.SOURCE:
            continue
        op = operators[name]
        logic[name] = UserLogic(op.function, dataflow.kind(name), dataflow.children(name), op.flush)
    return Job(dataflow, logic, source, **options)


def user_update(dataflow: Dataflow, operator: str, function: UserFunction,
                transform: Callable[[Any], Any], flush: UserFlush | None = None) -> Update:
    """An :class:`Update` of a user operator with the default routing."""
    return Update(UserLogic(function, dataflow.kind(operator), dataflow.children(operator), flush), transform)
