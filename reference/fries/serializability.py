"""Linear-time conflict-serializability checking (Fries Def. 4.8, 4.9) - reference.

Verified against the brute-force definition :mod:`spec.fries.serializability` by
``tests/test_fries_serializability.py``.

**Why it is linear.** A schedule is conflict-serializable iff its precedence graph is acyclic
(the textbook theorem; the spec checks the definition itself, over all serial orders). The
full graph may have (data operations x updates) edges, so we build a *compressed* graph with
the same reachability. In each object's log the update operations cut the data operations
into segments; an operation conflicts with an update iff they are on the same object, so:

* a data operation of T after update u (and before the next one) gives u -> T,
* a data operation of T before update u' (and after the previous one) gives T -> u',
* consecutive updates u, u' of one object give u -> u'.

Every full edge is a path of these edges (follow the chain of updates of that object) and
every compressed edge is a full edge, so both graphs have the same transitive closure: the
same cycles, and the same topological orders. Further, a data transaction only touches
update transactions: one that is only ever *after* updates is a sink and one only *before*
updates (or touching no update) is a source; neither lies on a cycle. Only the *bridging*
data transactions (after some update and before some update) join the update transactions
in the graph we sort. All of this is set algebra over log slices, O(operations +
transactions).

**The witness.** When the graph has a cycle, :mod:`reference.fries.cycles` finds a shortest
cycle of the full precedence graph and each edge's evidence (object and the two log
positions); :meth:`Verdict.explain` tells it in words, in the style of Elle.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from reference.fries.compact import CompactSchedule, compact_from_schedule
from reference.fries.cycles import shortest_cycle, strongly_connected
from spec.fries.schedule import Schedule


@dataclass(frozen=True)
class CycleStep:
    """One edge of a witness cycle: ``before`` must precede ``after`` in any equivalent
    serial order, because on ``obj`` the operation at ``before_position`` (of ``before``)
    precedes the conflicting operation at ``after_position`` (of ``after``)."""

    before: str
    after: str
    obj: str
    before_position: int
    after_position: int
    before_update: bool
    after_update: bool

    def explain(self) -> str:
        """This edge in words."""
        where = (f"({self.obj}: {self.before} at [{self.before_position}], then "
                 f"{self.after} at [{self.after_position}])")
        if self.before_update and self.after_update:
            return f"update {self.before} changed {self.obj} before update {self.after} did {where}"
        if self.before_update:
            return (f"update {self.before} changed {self.obj} before {self.after} "
                    f"reached it {where}")
        return f"{self.before} reached {self.obj} before update {self.after} changed it {where}"


@dataclass(frozen=True)
class Verdict:
    """The result of :func:`check_serializability`: a conflict-equivalent serial order
    (every transaction once) when serializable, else a shortest cycle of the precedence
    graph (transaction ids, the first not repeated at the end) and its edges."""

    serializable: bool
    serial_order: tuple[str, ...] | None
    cycle: tuple[str, ...] | None
    steps: tuple[CycleStep, ...]

    def explain(self) -> str:
        """The verdict in words (the cycle, edge by edge, when not serializable)."""
        if self.serializable:
            order = self.serial_order or ()
            shown = ", ".join(order[:20]) + (", ..." if len(order) > 20 else "")
            return (f"conflict-serializable: {len(order)} transactions; an equivalent serial "
                    f"order is {shown}")
        assert self.cycle is not None
        said = [s.explain() for s in self.steps]
        if len(self.cycle) == 2:
            a, b = self.cycle
            reason = f"{said[0]}, but {said[1]}: {a} must come both before and after {b}"
        else:
            chain_text = ", ".join(f"{s.before} before {s.after}" for s in self.steps)
            reason = "; ".join(said) + f": a serial order would need {chain_text}, a cycle"
        return f"NOT conflict-serializable: {reason}."

    def to_json(self) -> dict[str, Any]:
        """``{"serializable", "cycle", "serial_order"}`` (the check-schedule contract)."""
        return {
            "serializable": self.serializable,
            "cycle": list(self.cycle) if self.cycle is not None else None,
            "serial_order": list(self.serial_order) if self.serial_order is not None else None,
        }


def check_serializability(schedule: Schedule) -> Verdict:
    """Is ``schedule`` conflict-serializable (Def. 4.9)? Linear time; see the module doc."""
    return check_compact(compact_from_schedule(schedule))


def check_compact(schedule: CompactSchedule) -> Verdict:
    """:func:`check_serializability` on the compact form (what the CLI uses).

    The serial order lists, each group in order of first appearance (objects in input
    order, then log order): the data transactions that precede every update they conflict
    with, then those that conflict with nothing, then the update and bridging transactions
    in a topological order, then the data transactions that follow updates."""
    graph = _compressed_graph(schedule)
    order = _topological(graph.core, graph.successors)
    if order is not None:
        before, after = graph.before, graph.after
        first = _ordered(before - after, graph.before_pieces)
        alone = _ordered(graph.free - before - after, graph.free_logs)
        last = _ordered(after - before, graph.after_pieces)
        return Verdict(True, tuple(first + alone + order + last), None, ())
    cyclic = [c for c in strongly_connected(graph.core, graph.successors) if len(c) > 1]
    rank = {t: i for i, t in enumerate(graph.core)}
    edges = shortest_cycle(schedule, cyclic, graph.updates, rank)
    steps = [CycleStep(a, b, obj, p, q, schedule.is_update(obj, p), schedule.is_update(obj, q))
             for a, b, obj, p, q in edges]
    start = next((i for i, s in enumerate(steps) if s.before not in graph.updates), 0)
    steps = steps[start:] + steps[:start]
    return Verdict(False, None, tuple(s.before for s in steps), tuple(steps))


@dataclass
class _Graph:
    updates: frozenset[str]
    before: set[str]              # data transactions with an operation before some update
    after: set[str]               # data transactions with an operation after some update
    free: set[str]                # transactions on objects without updates
    before_pieces: list[Sequence[str]]  # the log slices they come from, in input order
    after_pieces: list[Sequence[str]]
    free_logs: list[Sequence[str]]
    core: list[str]               # update + bridging transactions, in appearance order
    successors: dict[str, list[str]]


def _compressed_graph(schedule: CompactSchedule) -> _Graph:
    """The compressed precedence graph (module docstring). Sets are only used for
    membership; every order comes from walking the logs (string hashing, hence set
    iteration order, is randomised per process)."""
    segments: list[tuple[str, int, int, str | None, str | None]] = []
    links: list[tuple[str, str]] = []
    before_pieces: list[Sequence[str]] = []
    after_pieces: list[Sequence[str]] = []
    free_logs: list[Sequence[str]] = []
    update_order: list[str] = []
    for obj in schedule.objects:
        ids, marks = schedule.txns[obj], schedule.updates[obj]
        if not marks:
            free_logs.append(ids)
            continue
        previous: str | None = None
        start = 0
        for mark in [*marks, len(ids)]:
            following = ids[mark] if mark < len(ids) else None
            if following is not None:
                update_order.append(following)
            if start < mark:
                piece = ids[start:mark]
                if previous is not None:
                    after_pieces.append(piece)
                if following is not None:
                    before_pieces.append(piece)
                segments.append((obj, start, mark, previous, following))
            if previous is not None and following is not None:
                links.append((previous, following))
            previous, start = following, mark + 1
    before: set[str] = set()
    after: set[str] = set()
    free: set[str] = set()
    for pieces, members in ((before_pieces, before), (after_pieces, after), (free_logs, free)):
        for piece in pieces:
            members.update(piece)
    bridging = before & after
    for obj, start, end, previous, following in segments if bridging else ():
        for txn in _in_order(bridging, schedule.txns[obj][start:end]):
            if previous is not None:
                links.append((previous, txn))
            if following is not None:
                links.append((txn, following))
    updates = dict.fromkeys(update_order)
    core = list(updates) + _ordered(bridging, before_pieces)
    successors: dict[str, list[str]] = {t: [] for t in core}
    for a, b in links:
        successors[a].append(b)
    return _Graph(frozenset(updates), before, after, free, before_pieces, after_pieces,
                  free_logs, core, successors)


def _ordered(wanted: set[str], pieces: Sequence[Sequence[str]]) -> list[str]:
    """The members of ``wanted``, each once, in order of first occurrence in ``pieces``.
    Each transaction is found in the first piece holding it and then leaves the pending
    set, so the scan is C-level membership tests, O(total length)."""
    pending = set(wanted)
    out: list[str] = []
    for piece in pieces:
        if not pending:
            break
        hits = list(filter(pending.__contains__, piece))
        if hits:
            unique = list(dict.fromkeys(hits))
            pending.difference_update(unique)
            out.extend(unique)
    return out


def _in_order(wanted: set[str], piece: Sequence[str]) -> list[str]:
    """The members of ``wanted`` occurring in ``piece``, once each, in order of first
    occurrence (set intersection in C, then ordering the few hits)."""
    hits = wanted.intersection(piece)
    if not hits:
        return []
    if len(hits) <= 16:
        return sorted(hits, key=piece.index)
    return [t for t in dict.fromkeys(piece) if t in hits]


def _topological(nodes: Sequence[str],
                 successors: Mapping[str, Sequence[str]]) -> list[str] | None:
    """Kahn's algorithm seeded in appearance order; None when there is a cycle."""
    indegree = dict.fromkeys(nodes, 0)
    for node in nodes:
        for nxt in successors[node]:
            indegree[nxt] += 1
    ready = deque(n for n in nodes if indegree[n] == 0)
    out: list[str] = []
    while ready:
        node = ready.popleft()
        out.append(node)
        for nxt in successors[node]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    return out if len(out) == len(nodes) else None
