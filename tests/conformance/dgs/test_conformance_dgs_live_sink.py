"""The live DGS engine's sink function (``conformance.dgs.engines.live.Collected``): "a batch
whose delivery was not recorded (a kill after the sink got it: ``killed``) ... reaches it again
at most once"; every other batch reaches the sink once. Checked on hand-built deliveries."""

from __future__ import annotations

from typing import Any

from conformance.dgs.engines.live import Collected


class Frame:
    def collect(self) -> list[dict[str, Any]]:
        return [{"job": 0, "value": "1"}]


def delivered(*batches: int) -> Collected:
    collected = Collected()
    for batch in batches:
        collected(Frame(), batch)
    return collected


def test_a_repeated_delivery_is_allowed_only_for_a_batch_killed_between_delivery_and_record() -> None:
    assert delivered(0, 1, 1, 2).repeated({1}) is None
    assert "{1: 2}" in (delivered(0, 1, 1, 2).repeated(set()) or "")


def test_a_killed_batch_reaches_the_sink_again_at_most_once() -> None:
    assert "{1: 3}" in (delivered(0, 1, 1, 1).repeated({1}) or "")
