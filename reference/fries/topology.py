"""The object-level graph a simulation runs on (Fries §7.1, §7.2).

Objects are the scenario's workers (:meth:`Scenario.objects`: ``O`` for one worker, ``O#i``
for several). Every dataflow edge ``A -> B`` becomes one FIFO *channel* per pair of workers
``(A#i, B#j)`` (hash partitioning: any worker of A may send any key to any worker of B, so
the paper counts the channels between two shuffled operators as the product of their worker
counts, §8.10 / Table 7).

The graph is built with the part-A expansion :func:`spec.fries.workers.expand_workers`
(hash partitioning everywhere, as the scenario format routes ``key mod p``) and renamed to the
scenario's object names, so Fries' MCS (with the ports and operator groups its pruning rules
need) is computed on exactly the objects the schedule names.

*Pipelined channels* (§7.1) are the channels not leaving a blocking operator: control
messages (epoch markers, checkpoint barriers) travel and are aligned on these only; a
blocking operator's flush uses its output channels after every reconfiguration has finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from spec.fries.dataflow import Dataflow, Operator, OperatorKind
from spec.fries.scenario import Scenario
from spec.fries.workers import WorkerGroups, expand_workers


@dataclass(frozen=True)
class Topology:
    """Objects, channels and the object-level DAG of one scenario.

    ``flow`` is the worker-expanded DAG (object names as in the schedule, kinds inherited
    from the operators, §7.2) with ``groups`` for the pruning rules; ``operator_of`` maps
    each object to its operator; ``objects_of`` lists each operator's objects;
    ``pipelined_in`` / ``pipelined_out`` give, per object, the senders / receivers of its
    pipelined channels, in a deterministic order."""

    flow: Dataflow
    groups: WorkerGroups
    operator_of: Mapping[str, str]
    objects_of: Mapping[str, tuple[str, ...]]
    pipelined_in: Mapping[str, tuple[str, ...]]
    pipelined_out: Mapping[str, tuple[str, ...]]
    sources: tuple[str, ...]

    @property
    def objects(self) -> tuple[str, ...]:
        """Every object (sources included), operators in topological order."""
        return self.flow.names

    @property
    def roots(self) -> tuple[str, ...]:
        """Objects with no pipelined input channel: the sources and the first operators of a
        downstream pipelined region (§7.1). Epoch markers and checkpoint barriers are
        injected here by the controller."""
        return tuple(o for o in self.objects if not self.pipelined_in[o])

    def pipelined_channels(self) -> tuple[tuple[str, str], ...]:
        """Every pipelined channel (sender, receiver)."""
        return tuple((s, r) for s in self.objects for r in self.pipelined_out[s])

    def data_channels(self) -> tuple[tuple[str, str], ...]:
        """Every data channel (sender, receiver), blocking operators' outputs included."""
        return self.flow.edges


def build_topology(scenario: Scenario) -> Topology:
    """The object graph of ``scenario`` (see the module docstring)."""
    flow = scenario.dataflow
    order = flow.topological_order()
    ordered = Dataflow(tuple(flow.operator(n) for n in order), flow.edges)
    parallel = expand_workers(ordered, {n: scenario.workers(n) for n in order})
    rename: dict[str, str] = {}
    for name in order:
        for index, vertex in enumerate(parallel.workers[name]):
            rename[vertex] = scenario.objects(name)[index]
    operators = tuple(Operator(rename[op.name], op.kind, op.unique) for op in parallel.flow.operators)
    edges = tuple((rename[s], rename[d]) for s, d in parallel.flow.edges)
    groups = WorkerGroups(
        operator_of={rename[v]: op for v, op in parallel.groups.operator_of.items()},
        port_of={(rename[s], rename[d]): port for (s, d), port in parallel.groups.port_of.items()},
    )
    object_flow = Dataflow(operators, edges)
    operator_of = {obj: op for obj, op in groups.operator_of.items()}
    blocking = {n for n in order if flow.kind(n) is OperatorKind.BLOCKING}
    pipelined_in: dict[str, list[str]] = {o: [] for o in object_flow.names}
    pipelined_out: dict[str, list[str]] = {o: [] for o in object_flow.names}
    for src, dst in edges:
        if operator_of[src] in blocking:
            continue
        pipelined_out[src].append(dst)
        pipelined_in[dst].append(src)
    return Topology(
        flow=object_flow,
        groups=groups,
        operator_of=operator_of,
        objects_of={n: scenario.objects(n) for n in order},
        pipelined_in={o: tuple(v) for o, v in pipelined_in.items()},
        pipelined_out={o: tuple(v) for o, v in pipelined_out.items()},
        sources=tuple(o for o in object_flow.names if flow.kind(operator_of[o]) is OperatorKind.SOURCE),
    )
