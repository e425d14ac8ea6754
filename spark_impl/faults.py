"""Seeded faults: real, detectable bugs the conformance suite must catch (off unless injected).

Each name switches on one bug in the executor's code path (grep the name in spark_impl/):
``naive`` - the Fries scheduler is replaced by the naive FCM scheduler (no MCS, no
alignment); ``missing-alignment`` - a non-head component member switches as soon as its
markers are in, before processing the batch's old-version input; ``double-transform`` - the
state transformation is applied twice at a switch; ``duplicate-after-restart`` - the sink
appends every batch that ran, so batches replayed after a restart appear twice.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from spec.errors import InputError

FAULTS: Mapping[str, str] = {
    "naive": "fries requested but the naive FCM scheduler runs: no MCS, no alignment (Fries §4.1)",
    "missing-alignment": "a non-head component operator switches before processing its old-version input",
    "double-transform": "the state transformation is applied twice when an object switches",
    "duplicate-after-restart": "the sink appends replayed batches after a restart instead of keying by batch id",
}


def check_faults(faults: Iterable[str]) -> None:
    """Raise :class:`InputError` naming an unknown fault."""
    for name in faults:
        if name not in FAULTS:
            raise InputError(f"unknown fault {name!r} (known: {', '.join(sorted(FAULTS))})")
