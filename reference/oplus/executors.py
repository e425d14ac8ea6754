"""Sequential execution of O+ and the run results every executor returns (STRETCH Corollary 1).

* :func:`run_sequential` - one instance owning every key, fed by one TB merging the sources.
* SN execution (:func:`reference.oplus.sn.run_sn`) lives in :mod:`reference.oplus.sn`.

Every runner (sequential, SN, VSN) returns a :class:`RunResult`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Sequence

from spec.oplus.model import OPlus, OutputTuple, StreamTuple
from spec.oplus.watermarks import Mark, SourceItem
from reference.oplus.instance import Instance
from reference.oplus.state import WindowStore, Write
from reference.oplus.tuple_buffer import TupleBuffer


@dataclass
class ReconfigEvent:
    """One applied reconfiguration (VSN): the triggering tuple's timestamp, the watermark
    before it (W-bar), epochs, instance sets and the step at which it was applied."""

    trigger_ts: int
    w_bar: float
    epoch: int
    before: frozenset[int]
    after: frozenset[int]
    step: int


@dataclass(frozen=True)
class Rejected:
    """A requested reconfiguration that was not applied, and why (a request the input never
    reaches, or reaches only at its end, is reported, never silently dropped)."""

    watermark: int
    parallelism: int
    reason: str


@dataclass
class RunResult:
    """What an execution produced: ``outputs`` (as collected), ``per_instance`` (each
    instance's outputs in emission order, with the step they were emitted at), tuple
    ``copies`` delivered to instances and how many were ``duplicated``, applied
    ``reconfigurations``, ``rejected`` requests, the audited ``writes`` of the window
    store(s) and, for SN reconfigurations, the state transferred (keys, window sets) and the
    buffered tuples ``rerouted`` to their new owners."""

    outputs: list[OutputTuple] = field(default_factory=list)
    per_instance: dict[int, list[tuple[int, OutputTuple]]] = field(default_factory=dict)
    tuples: int = 0
    copies: int = 0
    duplicated: int = 0
    reconfigurations: list[ReconfigEvent] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    steps: int = 0
    busy: dict[str, float] = field(default_factory=dict)
    rejected: list[Rejected] = field(default_factory=list)
    transferred_keys: int = 0
    transferred_sets: int = 0
    rerouted: int = 0

    def charge(self, actor: str, since: float) -> None:
        """Add the CPU time since ``since`` (``time.process_time()``) to ``actor``'s busy
        time: each source and instance is a thread in STRETCH, so the largest busy time
        bounds a parallel run's duration (benchmarks/oplus_sn_vs_vsn.py)."""
        self.busy[actor] = self.busy.get(actor, 0.0) + time.process_time() - since

    def record(self, ident: int, output: OutputTuple) -> None:
        """Record an emission by instance ``ident`` at the current step."""
        self.per_instance.setdefault(ident, []).append((self.steps, output))


def all_tuples(sources: Sequence[Sequence[SourceItem]]) -> list[StreamTuple]:
    """Every tuple of the sources."""
    return [item for source in sources for item in source if isinstance(item, StreamTuple)]


def run_sequential(op: OPlus, sources: Sequence[Sequence[SourceItem]],
                   audit: bool = False) -> RunResult:
    """Sequential O+: one instance, one TB over all sources, each ending with mark +inf."""
    result = RunResult(tuples=len(all_tuples(sources)))
    tb = TupleBuffer(range(len(sources)), readers=[0])
    store = WindowStore(audit=audit)

    def emit(ident: int, output: OutputTuple) -> None:
        result.outputs.append(output)
        result.record(ident, output)

    instance = Instance(0, op, store, lambda key: 0, emit)
    for index, source in enumerate(sources):
        for item in source:
            _add(tb, item, index)
        tb.add_watermark(math.inf, index)
    while (delivered := tb.get(0)) is not None:
        result.steps += 1
        if delivered.tuple is not None:
            result.copies += 1
        instance.process(delivered)
    result.writes = store.writes
    return result


def _add(tb: TupleBuffer, item: SourceItem, source: int) -> None:
    if isinstance(item, Mark):
        tb.add_watermark(item.value, source)
    else:
        tb.add(item, source)
