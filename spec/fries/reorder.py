"""Source reordering within a watermark bound: the ``timing.reorder_bound`` test hook.

Real sources deliver out of order, but with *bounded disorder*: a watermark that lags the
newest event by b positions is never violated, i.e. no tuple arrives more than b positions
away from where it would arrive in order. Fries assumes nothing about the order of data
transactions (Def. 4.6-4.9 constrain only conflicts), so a correct run under any such
reordering must still be conflict-serializable and compute what *some* serial order computes;
reordering only changes *which* serial order that is. Transaction ids are those of
:func:`~spec.fries.scenario.ingestion_order` (``"S:i"``), so serial semantics are unchanged.

The permutation (with ``b = timing.reorder_bound``, ``s = timing.seed``): the i-th tuple of
:func:`~spec.fries.scenario.ingestion_order` gets the offset

    o_i = int(sha256(f"{s}:{i}").hexdigest(), 16) mod (b + 1)          (in [0, b])

and tuples are ingested in increasing (i + o_i, o_i): tuple i *arrives* at time i + o_i
(delayed o_i slots), and of tuples arriving together the less delayed goes first (that is,
the later one; ties by index instead would never move a tuple a full b positions, so b = 1
would not reorder at all). A hash rather than ``random.Random`` makes the order
language-neutral and stable across Python versions.

Displacement bound (checked by a hypothesis property in tests/reference/fries/test_fries_reorder.py): if the
tuple i ends at position p then |p - i| <= b. Proof: every j < i - b has j + o_j <= j + b < i
<= i + o_i, so it comes before i, hence p >= i - b; every j > i + b has j + o_j > i + b >=
i + o_i, so it comes after i, so the tuples before i are among indices <= i + b other than
i, hence p <= i + b (the tie rule plays no part). The bound is attained: o_i = b, o_{i+1} =
... = o_{i+b} = 0 puts tuple i after the next b. With b = 0 every offset is 0 and the order
is ``ingestion_order``.
"""

from __future__ import annotations

import hashlib

from spec.fries.scenario import Scenario, SourceTuple, ingestion_order


def reorder_offset(seed: int, index: int, bound: int) -> int:
    """o_i of the module docstring: the seeded delay, in [0, bound], of the index-th tuple."""
    if bound <= 0:
        return 0
    digest = hashlib.sha256(f"{seed}:{index}".encode()).hexdigest()
    return int(digest, 16) % (bound + 1)


def reordered_ingestion(scenario: Scenario) -> tuple[SourceTuple, ...]:
    """All source tuples in the order sources ingest them: :func:`ingestion_order` permuted
    by increasing (i + o_i, o_i), no tuple moved more than ``timing.reorder_bound`` positions
    (see the module docstring)."""
    order = ingestion_order(scenario)
    bound, seed = scenario.timing.reorder_bound, scenario.timing.seed
    if bound <= 0:
        return order
    offsets = [reorder_offset(seed, i, bound) for i in range(len(order))]
    ranked = sorted(range(len(order)), key=lambda i: (i + offsets[i], offsets[i]))
    return tuple(order[i] for i in ranked)
