"""Key groups, instant migration and modification punctuations (Enorm §4.4-4.5, §6.2).

* **Key groups.** Keys are partitioned into ``groups`` key groups by a hash; a partitioner
  maps each group to a node (§4.4). Here ``group_of(key) = crc32(repr-free str(key)) % groups``.
* **Instant migration** (§4.5 category 1, "Scaling a Flexible Stateful Component"): a new
  assignment takes effect at a *modification punctuation* placed in the input stream; tuples
  after it go to the group's new node, and *no state moves*: the old node keeps its partials
  and still emits them; consolidate merges the partials of a (key, window) from old and new
  nodes. The meaning of a run with migrations is therefore: the records routed to each node
  are computed there (:func:`spec.enorm.panes.compute`), and the union of every node's
  partials is consolidated - which equals the direct result (:mod:`spec.enorm.panes`).
* **Temporary key expansion** (§4.5): after migrating at event time ``m``, the old node's
  partials of the group still matter for every window that contains a pane before ``m``;
  :func:`expansion_ends` gives the watermark after which they are useless.
* **Modification punctuations** (§6.2): a punctuation travels in FIFO order with the data
  and timestamp punctuations, and is never buffered, so every component that receives it has
  seen the same timestamp punctuations before it and modifies the same set of *active*
  windows: those not yet ready at the latest timestamp punctuation before it
  (:func:`active_windows`).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Hashable, Mapping, Sequence

from spec.enorm.panes import Key, Record, pane_size
from spec.oplus.windows import Watermark, WindowSpec


def group_of(key: Key, groups: int) -> int:
    """The key group of ``key``: ``crc32(str(key)) % groups`` (stable across processes)."""
    return zlib.crc32(str(key).encode("utf-8")) % groups


@dataclass(frozen=True)
class Migration:
    """A modification punctuation at stream position ``position`` (before the record with
    that index): from then on the groups in ``moves`` go to the given nodes."""

    position: int
    moves: Mapping[int, Hashable]


def route(records: Sequence[Record], groups: int, initial: Mapping[int, Hashable],
          migrations: Sequence[Migration]) -> list[Hashable]:
    """The node each record is computed on: the assignment in force at its position."""
    assignment = dict(initial)
    pending = sorted(migrations, key=lambda m: m.position)
    nodes: list[Hashable] = []
    for index, record in enumerate(records):
        while pending and pending[0].position <= index:
            assignment.update(pending.pop(0).moves)
        nodes.append(assignment[group_of(record.key, groups)])
    return nodes


def expansion_ends(spec: WindowSpec, migrated_at: int) -> int:
    """The watermark from which the old node's partials of a group migrated at event time
    ``migrated_at`` are in no unfinished window: the right boundary of the last window that
    contains the pane before ``migrated_at`` (expiry rule ``L + WS <= W``)."""
    last_pane = ((migrated_at - 1) // pane_size(spec)) * pane_size(spec)
    return spec.latest_left(last_pane) + spec.WS


def active_windows(spec: WindowSpec, keys: Sequence[Key], last_punctuation: Watermark,
                   horizon: int) -> frozenset[tuple[Key, int]]:
    """The (key, window) instances not yet ready for final processing at timestamp
    punctuation ``last_punctuation`` (§6.2 "active"), among windows starting before
    ``horizon``."""
    lefts = range(spec.earliest_left(0), horizon, spec.WA)
    return frozenset((k, left) for k in keys for left in lefts
                     if not spec.expired(left, last_punctuation))
