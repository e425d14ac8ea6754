"""The live engine's whole-trigger oracle (:func:`conformance.fries.engines.live_query.whole_trigger_problem`):
one trigger of the Structured Streaming query runs as one executor batch (``start_query``'s
``batch_size`` default), on hand-built batch records."""

from __future__ import annotations

from types import SimpleNamespace

from conformance.fries.engines.live_query import whole_trigger_problem


def test_a_trigger_split_into_several_executor_batches_is_named() -> None:
    """A trigger whose tuples ran as several executor batches is named."""
    assert whole_trigger_problem(SimpleNamespace(batches={0: [3], 1: [4], 2: []})) is None
    found = whole_trigger_problem(SimpleNamespace(batches={0: [3], 1: [4, 5, 6]}))
    assert found is not None and "batch 1 ran as 3 executor batches" in found


