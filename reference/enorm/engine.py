"""A streaming Enorm job: router -> compute nodes -> consolidate (Enorm §4.2-4.5, §6.2).

* The router maps each record's key group to a node (:mod:`spec.enorm.migration`); a
  *modification punctuation* in the stream changes the assignment instantly - no state is
  moved (instant migration).
* A compute node keeps one partial state per (key, pane) and folds each record in once
  (Optimization 2). On a timestamp punctuation ``w`` it sends downstream every partial whose
  pane is complete (pane end ``<= w``) and forwards ``w``.
* Consolidate keeps, as §6.2 describes, the latest timestamp punctuation per upstream node
  and works with their minimum; it merges each arriving partial into every window containing
  its pane - partials of one (key, pane) from several nodes (after a migration) simply merge
  - and emits each window once its right boundary is ``<=`` that minimum (the expiry rule of
  :mod:`spec.oplus.windows`).

Stream items: :class:`~spec.enorm.panes.Record` (sorted by ts), :class:`Punctuation`,
:class:`Modification`; the job ends with the punctuation +inf. Statistics: partials sent and
merged, and the largest number of nodes holding partials of one key group at once (the
*temporary key expansion* of §4.5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Generic, Hashable, Iterable, Mapping, Union

from spec.enorm.migration import group_of
from spec.enorm.panes import M, Key, Monoid, Partial, Record, pane_of, pane_size, windows_of_pane
from spec.oplus.windows import NO_WATERMARK, Watermark, WindowSpec


@dataclass(frozen=True)
class Punctuation:
    """A timestamp punctuation: no later record has a smaller timestamp."""

    ts: Watermark


@dataclass(frozen=True)
class Modification:
    """A modification punctuation: from here on, groups in ``moves`` go to new nodes."""

    moves: Mapping[int, Hashable]


Item = Union[Record, Punctuation, Modification]


@dataclass
class Stats:
    """What a run cost: partials sent by compute, merges done by consolidate, the largest
    number of nodes holding partials of one key group at once, and migrations applied."""

    partials_sent: int = 0
    merges: int = 0
    max_nodes_per_group: int = 1
    migrations: int = 0
    completed_at_modification: list[frozenset[tuple[Key, int]]] = field(default_factory=list)


class ComputeNode(Generic[M]):
    """Enorm's compute on one node: per (key, pane) partial states, released when complete."""

    def __init__(self, name: Hashable, spec: WindowSpec, monoid: Monoid[M]) -> None:
        self.name = name
        self.spec = spec
        self.monoid = monoid
        self.partials: dict[tuple[Key, int], M] = {}

    def process(self, record: Record) -> None:
        """Fold one record into its pane's partial (each record processed once)."""
        slot = (record.key, pane_of(self.spec, record.ts))
        self.partials[slot] = self.monoid.combine(self.partials.get(slot, self.monoid.zero),
                                                  self.monoid.lift(record))

    def release(self, watermark: Watermark) -> list[Partial[M]]:
        """The partials of complete panes (pane end <= watermark), removed from the node."""
        size = pane_size(self.spec)
        done = [slot for slot in self.partials if slot[1] + size <= watermark]
        return [Partial(k, p, self.partials.pop((k, p)), self.name) for k, p in sorted(
            done, key=lambda s: (s[1], repr(s[0])))]


class Consolidator(Generic[M]):
    """Enorm's consolidate for one window specification."""

    def __init__(self, spec: WindowSpec, monoid: Monoid[M], upstream: Iterable[Hashable],
                 stats: Stats) -> None:
        self.spec = spec
        self.monoid = monoid
        self.stats = stats
        self.punctuations: dict[Hashable, Watermark] = {n: NO_WATERMARK for n in upstream}
        self.windows: dict[tuple[Key, int], M] = {}
        self.results: dict[tuple[Key, int], Any] = {}

    def receive(self, partial: Partial[M]) -> None:
        """Merge a partial into every window that contains its pane."""
        for left in windows_of_pane(self.spec, partial.pane):
            slot = (partial.key, left)
            if slot in self.results:
                raise AssertionError(f"partial for {slot} arrived after the window was emitted")
            self.windows[slot] = self.monoid.combine(self.windows.get(slot, self.monoid.zero),
                                                     partial.state)
            self.stats.merges += 1

    def punctuate(self, node: Hashable, ts: Watermark) -> None:
        """A timestamp punctuation from ``node``: emit every window ready at the minimum."""
        self.punctuations[node] = max(self.punctuations[node], ts)
        oldest = min(self.punctuations.values())
        for slot in [s for s in self.windows if self.spec.expired(s[1], oldest)]:
            self.results[slot] = self.monoid.finish(self.windows.pop(slot))


@dataclass
class EnormJob(Generic[M]):
    """Router + compute nodes + consolidate (module docstring)."""

    spec: WindowSpec
    monoid: Monoid[M]
    groups: int
    assignment: dict[int, Hashable]
    stats: Stats = field(default_factory=Stats)

    def __post_init__(self) -> None:
        names = sorted(set(self.assignment.values()), key=repr)
        self.nodes: dict[Hashable, ComputeNode[M]] = {
            n: ComputeNode(n, self.spec, self.monoid) for n in names}
        self.consolidator = Consolidator(self.spec, self.monoid, names, self.stats)

    def feed(self, item: Item) -> None:
        """Process one stream item."""
        if isinstance(item, Modification):
            self.stats.migrations += 1
            # §6.2: the windows already completed when the modification arrives; every other
            # window is active and is modified (here: receives the new routing's partials)
            self.stats.completed_at_modification.append(frozenset(self.consolidator.results))
            for group, node in item.moves.items():
                if node not in self.nodes:  # a fresh node: instantly fired up, empty
                    self.nodes[node] = ComputeNode(node, self.spec, self.monoid)
                    self.consolidator.punctuations[node] = min(
                        self.consolidator.punctuations.values(), default=NO_WATERMARK)
                self.assignment[group] = node
        elif isinstance(item, Record):
            self.nodes[self.assignment[group_of(item.key, self.groups)]].process(item)
            self._expansion()
        else:
            for node in self.nodes.values():
                for partial in node.release(item.ts):
                    self.stats.partials_sent += 1
                    self.consolidator.receive(partial)
                self.consolidator.punctuate(node.name, item.ts)

    def run(self, items: Iterable[Item]) -> dict[tuple[Key, int], Any]:
        """Feed every item, then the final punctuation +inf; the window results."""
        for item in items:
            self.feed(item)
        self.feed(Punctuation(math.inf))
        return self.consolidator.results

    def _expansion(self) -> None:
        holders: dict[int, set[Hashable]] = {}
        for node in self.nodes.values():
            for key, _ in node.partials:
                holders.setdefault(group_of(key, self.groups), set()).add(node.name)
        widest = max((len(v) for v in holders.values()), default=1)
        self.stats.max_nodes_per_group = max(self.stats.max_nodes_per_group, widest)
