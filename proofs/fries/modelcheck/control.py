"""What each scheduler does in one reconfiguration, as data the transition system runs.

The object graph is the worker expansion of the configuration (:func:`spec.fries.workers.
expand_workers`, hash partitioning, exactly as the simulator's topology builds it). A
:class:`Control` says, per object, on which input channels it aligns epoch markers, on which
output channels it forwards them, and which objects the controller sends an FCM to. It is
computed from the same sources as the reference schedulers
(:mod:`reference.fries.schedulers`):

* ``naive`` (Fries §4.1): an FCM to every reconfigured object, applied on arrival; no markers;
* ``epoch`` (EBR, §3.1): FCMs to the roots (objects without pipelined input, §7.1); every
  object aligns on all its pipelined inputs and forwards on all its pipelined outputs;
* ``fries`` (Alg. 4), ``fries-alg3`` (Alg. 3, no pruning), ``fries-alg2`` (Alg. 2): the MCS of
  :func:`reference.fries.mcs.fries_mcs` on the object graph with its worker groups (what
  :func:`reference.fries.schedulers.fries.object_mcs` computes); FCMs to the heads of every
  component; alignment on MCS input edges, markers on MCS output edges.

``align_on_any`` is a deliberately broken variant for the tests (an object is aligned by the
first marker it takes instead of one from every input it aligns on): the model checker must
find its violations.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference.fries.mcs import fries_mcs
from spec.fries.dataflow import OperatorKind
from spec.fries.workers import ParallelDataflow, expand_workers, pipelined_view

from proofs.fries.modelcheck.configs import Config

#: Scheduler names (the CLI's ``--scheduler`` values besides ``all``).
SCHEDULERS = ("fries", "fries-alg3", "fries-alg2", "epoch", "naive")
_FRIES_OPTIONS = {
    "fries": {},
    "fries-alg3": {"prune_edgewise": False, "prune_uniqueness": False},
    "fries-alg2": {"one_to_many": False},
}


@dataclass(frozen=True)
class Objects:
    """The object graph: ``names``, ``channels`` (sender, receiver) as object indices - the
    pipelined ones only: a blocking operator's output channels carry nothing while a
    reconfiguration can run (§7.1) - and per object its kind, unique flag, logical operator
    and output channels grouped by port (one port per logical child edge)."""

    names: tuple[str, ...]
    channels: tuple[tuple[int, int], ...]
    kinds: tuple[OperatorKind, ...]
    unique: tuple[bool, ...]
    operator: tuple[int, ...]
    ports: tuple[tuple[tuple[int, ...], ...], ...]
    reconfigured: frozenset[int]
    parallel: ParallelDataflow

    @property
    def sources(self) -> tuple[int, ...]:
        """Objects of source operators."""
        return tuple(i for i, k in enumerate(self.kinds) if k is OperatorKind.SOURCE)

    def inputs(self, obj: int) -> tuple[int, ...]:
        """Channel ids into ``obj``."""
        return tuple(c for c, (_, dst) in enumerate(self.channels) if dst == obj)

    def outputs(self, obj: int) -> tuple[int, ...]:
        """Channel ids out of ``obj``."""
        return tuple(c for c, (src, _) in enumerate(self.channels) if src == obj)


def build_objects(config: Config) -> Objects:
    """The worker expansion of ``config`` as indexed data."""
    flow = config.flow
    parallel = expand_workers(flow, dict(config.workers))
    view = pipelined_view(parallel.flow)
    names = tuple(_short(n, parallel) for n in view.names)
    index = {n: i for i, n in enumerate(view.names)}
    channels = tuple((index[s], index[d]) for s, d in view.edges)
    groups = parallel.groups
    logical = {op: i for i, op in enumerate(flow.names)}
    ports: list[tuple[tuple[int, ...], ...]] = []
    for name in view.names:
        by_port: dict[str, list[int]] = {}
        for c, (src, dst) in enumerate(view.edges):
            if src == name:
                by_port.setdefault(groups.port((src, dst)), []).append(c)
        ports.append(tuple(tuple(v) for _, v in sorted(by_port.items())))
    reconfigured = frozenset(index[o] for o in parallel.reconfiguration(config.reconfigured))
    return Objects(
        names=names,
        channels=channels,
        kinds=tuple(view.kind(n) for n in view.names),
        unique=tuple(view.operator(n).unique for n in view.names),
        operator=tuple(logical[groups.operator(n)] for n in view.names),
        ports=tuple(ports),
        reconfigured=reconfigured,
        parallel=parallel,
    )


def _short(vertex: str, parallel: ParallelDataflow) -> str:
    """``A`` for the only worker of ``A`` (the simulator's object names), else ``A#i``."""
    operator = parallel.groups.operator(vertex)
    return operator if len(parallel.workers[operator]) == 1 else vertex


@dataclass(frozen=True)
class Control:
    """One scheduler's plan for the reconfiguration: ``naive`` (apply on the FCM, no
    markers) or the marker protocol with ``entries`` (FCM targets), ``align[obj]`` (input
    channel ids it aligns on) and ``forward[obj]`` (output channel ids it sends markers on);
    ``align_on_any`` is the planted bug (module docstring)."""

    scheduler: str
    naive: bool
    entries: frozenset[int]
    align: tuple[frozenset[int], ...]
    forward: tuple[tuple[int, ...], ...]
    align_on_any: bool = False


def control_for(scheduler: str, objects: Objects, *, align_on_any: bool = False) -> Control:
    """The plan of ``scheduler`` (one of :data:`SCHEDULERS`) on ``objects``."""
    n = len(objects.names)
    if scheduler == "naive":
        empty = tuple(frozenset[int]() for _ in range(n))
        return Control(scheduler, True, objects.reconfigured, empty, tuple(() for _ in range(n)))
    if scheduler == "epoch":
        align = tuple(frozenset(objects.inputs(o)) for o in range(n))
        forward = tuple(objects.outputs(o) for o in range(n))
        roots = frozenset(o for o in range(n) if not align[o])
        return Control(scheduler, False, roots, align, forward, align_on_any)
    options = _FRIES_OPTIONS[scheduler]
    flow = objects.parallel.flow
    vertices = flow.names
    targets = [vertices[o] for o in sorted(objects.reconfigured)]
    mcs = fries_mcs(flow, targets, groups=objects.parallel.groups, **options)
    index = {name: i for i, name in enumerate(vertices)}
    chan = {(vertices[s], vertices[d]): c for c, (s, d) in enumerate(objects.channels)}
    inner = [chan[e] for e in sorted(mcs.edges)]
    align_sets: list[set[int]] = [set() for _ in range(n)]
    forward_lists: list[list[int]] = [[] for _ in range(n)]
    for c in inner:
        src, dst = objects.channels[c]
        align_sets[dst].add(c)
        forward_lists[src].append(c)
    heads = frozenset(index[h] for component in mcs.components for h in mcs.heads(component))
    return Control(scheduler, False, heads, tuple(frozenset(s) for s in align_sets),
                   tuple(tuple(f) for f in forward_lists), align_on_any)
