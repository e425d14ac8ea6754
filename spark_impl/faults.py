"""Seeded faults: real, detectable bugs the conformance suite must catch (off unless injected).

Each name switches on one bug in the executor's code path (grep the name in spark_impl/):
``naive`` - the Fries scheduler is replaced by the naive FCM scheduler (no MCS, no
alignment); ``missing-alignment`` - a non-head component member switches as soon as its
markers are in, before processing the batch's old-version input; ``double-transform`` - the
state transformation is applied twice at a switch; ``duplicate-after-restart`` - the sink
appends every batch that ran, so batches replayed after a restart appear twice.
O+ (``spark_impl.oplus``, catalogue and user-defined operators alike): ``window-off-by-one`` -
window instances include their right boundary; ``drop-near-watermark`` - a tuple at exactly the
previous watermark is dropped as late.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from spec.errors import InputError

FAULTS: Mapping[str, str] = {
    "naive": "fries requested but the naive FCM scheduler runs: no MCS, no alignment (Fries §4.1)",
    "missing-alignment": "a non-head component operator switches before processing its old-version input",
    "double-transform": "the state transformation is applied twice when an object switches",
    "duplicate-after-restart": "the sink appends replayed batches after a restart instead of keying by batch id",
    # O+ executor (spark_impl.oplus):
    "window-off-by-one": "O+ windows include their right boundary: a tuple at L + WS also counts in [L, L + WS)",
    "drop-near-watermark": "O+ drops a tuple whose ts equals the previous watermark as late (<= where < is right)",
}

OPLUS_FAULTS: frozenset[str] = frozenset({"window-off-by-one", "drop-near-watermark"})
"""The faults seeded in the O+ executor (spark_impl.oplus); the others are the Fries executor's."""


def check_faults(faults: Iterable[str]) -> None:
    """Raise :class:`InputError` naming an unknown fault."""
    for name in faults:
        if name not in FAULTS:
            raise InputError(f"unknown fault {name!r} (known: {', '.join(sorted(FAULTS))})")
