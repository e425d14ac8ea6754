"""The Fries scheduler (Fries Alg. 2, 3, 4; §7.1 regions; §7.2 workers).

For reconfiguration R the controller computes the MCS of the worker-expanded dataflow
(:func:`reference.fries.mcs.fries_mcs` on the object graph, which cuts blocking operators'
outputs, §7.1) seeded with R's objects and - Alg. 3 - their earliest unpruned one-to-many
ancestors (Alg. 4's rules switchable). For each MCS component it sends an FCM to the
component's heads. A head applies its update on the FCM (if it is reconfigured; a one-to-many
ancestor is not) and sends an epoch marker on its MCS output edges only. Every other MCS
object aligns markers on its MCS input edges only, applies its update when aligned and
forwards the marker on its MCS output edges. Objects outside the MCS never see a marker and,
not being reconfigured, never switch.
"""

from __future__ import annotations

from typing import Iterable

from reference.fries.mcs import MCS, fries_mcs
from reference.fries.schedulers.alignment import MarkerScheduler
from reference.fries.schedulers.base import EngineView
from reference.fries.topology import Topology


def object_mcs(topology: Topology, operators: Iterable[str], *, prune_edgewise: bool = True,
               prune_uniqueness: bool = True, one_to_many: bool = True) -> MCS:
    """The MCS Fries synchronises a reconfiguration of ``operators`` on, over the objects
    (workers) of ``topology`` (§7.2: an update of O is an update of every worker of O)."""
    reconfigured = [obj for op in operators for obj in topology.objects_of[op]]
    return fries_mcs(topology.flow, reconfigured, prune_edgewise=prune_edgewise,
                     prune_uniqueness=prune_uniqueness, one_to_many=one_to_many,
                     groups=topology.groups)


class FriesScheduler(MarkerScheduler):
    """Fries with the pruning switches of Alg. 4 (``one_to_many=False`` is Alg. 2)."""

    name = "fries"

    def __init__(self, *, prune_edgewise: bool = True, prune_uniqueness: bool = True,
                 one_to_many: bool = True) -> None:
        self.options = {"prune_edgewise": prune_edgewise, "prune_uniqueness": prune_uniqueness,
                        "one_to_many": one_to_many}
        self.mcs: dict[int, MCS] = {}
        super().__init__()

    def start(self, engine: EngineView, rid: int) -> None:
        operators = engine.scenario.reconfigurations[rid - 1].updates
        mcs = object_mcs(engine.topology, operators, **self.options)
        self.mcs[rid] = mcs
        inputs: dict[str, set[str]] = {v: set() for v in mcs.vertices}
        out: dict[str, list[str]] = {v: [] for v in mcs.vertices}
        for src, dst in sorted(mcs.edges):
            inputs[dst].add(src)
            out[src].append(dst)
        heads = frozenset(h for component in mcs.components for h in mcs.heads(component))
        self.begin(engine, rid, {v: frozenset(s) for v, s in inputs.items()}, out, sorted(heads))
