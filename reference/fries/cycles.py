"""Cycle finding for the serializability checker: strongly connected components of the
compressed precedence graph, and a shortest cycle of the *full* precedence graph (used when
:mod:`reference.fries.two_cycles` finds no 2-cycle). Transactions are the numbers of
:class:`~reference.fries.compact.CompactSchedule`.

The full precedence graph (Fries Def. 4.8/4.9) has an edge Ti -> Tj when an
operation of Ti precedes a conflicting operation of Tj on the same object. Materialising it
costs O(data operations x update operations) edges. :func:`shortest_cycle` never does: it runs
a breadth-first search whose successor lists are read straight off the per-object logs, and
keeps per object a pointer below which the log suffix is already explored (every transaction
found there was discovered at a distance no larger than the current one, since BFS expands in
distance order). Each BFS thus reads each log position at most twice: O(operations).

Every cycle contains an update transaction (two data operations never conflict), so the
shortest cycle is the shortest over the update transactions u of "the shortest cycle through
u", which one BFS from u finds. Total O(u x operations) for u update transactions in cyclic
components - linear for the usual single reconfiguration. (Only reached when the shortest
cycle has 3 or more transactions: exact directed girth in linear time is not known even for
general graphs, and every digraph is the precedence graph of some schedule - one object per
edge, holding the two endpoints' updates - so this case cannot be linear without solving
that open problem; see docs/fries.md.)
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from operator import itemgetter
from typing import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from reference.fries.compact import CompactSchedule

_POSITION = itemgetter(0)

#: One precedence edge with its evidence: (before txn, after txn, object, position of the
#: before-operation, position of the after-operation).
Edge = tuple[int, int, str, int, int]


def strongly_connected(nodes: Iterable[int],
                       successors: Sequence[Sequence[int]]) -> list[list[int]]:
    """Tarjan's algorithm (iterative): the strongly connected components of the graph
    (``successors[v]`` lists v's successors)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    found: list[list[int]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work: list[tuple[int, int]] = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, i = work[-1]
            kids = successors[node]
            if i < len(kids):
                work[-1] = (node, i + 1)
                kid = kids[i]
                if kid not in index:
                    index[kid] = low[kid] = counter
                    counter += 1
                    stack.append(kid)
                    on_stack.add(kid)
                    work.append((kid, 0))
                elif kid in on_stack:
                    low[node] = min(low[node], index[kid])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[int] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(component)
    return found


class MemberLogs:
    """The operations of a set of transactions (the members of cyclic components), per
    object, in log order: ``entries[obj]`` holds (position, txn, is-update) and
    ``updates[obj]`` the update entries only. Objects without updates are left out (their
    operations conflict with nothing). The BFS scans these instead of the full logs."""

    def __init__(self, schedule: CompactSchedule, members: Sequence[int]) -> None:
        self.entries: dict[str, list[tuple[int, int, bool]]] = {}
        self.updates: dict[str, list[tuple[int, int, bool]]] = {}
        self.of: dict[int, list[tuple[str, int, bool]]] = {t: [] for t in members}
        wanted = np.zeros(len(schedule.names), dtype=bool)
        wanted[np.array(members, dtype=np.int64)] = True
        for obj in schedule.objects:
            marks = schedule.updates[obj]
            if not len(marks):
                continue
            ids = schedule.txns[obj]
            flagged = np.zeros(len(ids), dtype=bool)
            flagged[marks] = True
            positions = np.flatnonzero(wanted[ids])
            entries = list(zip(positions.tolist(), ids[positions].tolist(),
                               flagged[positions].tolist()))
            self.entries[obj] = entries
            self.updates[obj] = [e for e in entries if e[2]]
            for position, txn, is_update in entries:
                self.of[txn].append((obj, position, is_update))


def shortest_cycle(schedule: CompactSchedule, components: Sequence[Sequence[int]],
                   is_update: npt.NDArray[np.bool_]) -> list[Edge]:
    """A shortest cycle of the full precedence graph, as its edges in order, given the
    non-trivial strongly connected components. Ties go to the cycle found from the update
    transaction that appears first."""
    logs = MemberLogs(schedule, [t for component in components for t in component])
    best: list[Edge] | None = None
    for component in components:
        scope = set(component)
        for source in sorted(t for t in component if is_update[t]):
            limit = len(best) if best is not None else len(scope) + 1
            found = _bfs_cycle(logs, source, scope, limit)
            if found is not None:
                best = found
    if best is None:  # pragma: no cover - a non-trivial SCC always contains a cycle
        raise AssertionError("no cycle in a non-trivial strongly connected component")
    return best


def _bfs_cycle(logs: MemberLogs, source: int, scope: set[int],
               limit: int) -> list[Edge] | None:
    """Shortest cycle through ``source`` (an update transaction: one operation per object)
    shorter than ``limit``, or None. Per object, a pointer marks the suffix of the member
    log (all entries, or update entries) already scanned."""
    parent: dict[int, Edge | None] = {source: None}
    depth: dict[int, int] = {source: 0}
    all_from: dict[str, int] = {}   # entry indices >= this were already scanned
    upd_from: dict[str, int] = {}   # update-entry indices >= this were already scanned
    queue = deque([source])
    while queue:
        node = queue.popleft()
        if depth[node] + 1 >= limit:
            return None
        for obj, position, is_update in logs.of[node]:
            # an update conflicts with every later operation of another transaction, a data
            # operation only with later updates
            entries = logs.entries[obj] if is_update else logs.updates[obj]
            pointers = all_from if is_update else upd_from
            first = bisect_right(entries, position, key=_POSITION)
            end = pointers.get(obj, len(entries))
            if first >= end:
                continue
            pointers[obj] = first
            for other, txn, _ in entries[first:end]:
                if txn == node or txn not in scope:
                    continue
                edge = (node, txn, obj, position, other)
                if txn == source:
                    return _path(parent, node) + [edge]
                if txn not in depth:
                    depth[txn] = depth[node] + 1
                    parent[txn] = edge
                    queue.append(txn)
    return None


def _path(parent: Mapping[int, Edge | None], node: int) -> list[Edge]:
    edges: list[Edge] = []
    step = parent[node]
    while step is not None:
        edges.append(step)
        step = parent[step[0]]
    edges.reverse()
    return edges
