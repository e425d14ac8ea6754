"""The naive FCM scheduler (Fries §4.1).

The controller sends an FCM straight to every object of every reconfigured operator; each
applies the update as soon as it has finished its current tuple. No coordination at all: a
tuple can meet the old function at one operator and the new one at the next (Figure 2), so
its schedules are not conflict-serializable in general - the baseline the properties show
failing.
"""

from __future__ import annotations

from reference.fries.schedulers.base import EngineView, Scheduler


class NaiveScheduler(Scheduler):
    """FCM to each reconfigured object, applied on arrival."""

    name = "naive"

    def start(self, engine: EngineView, rid: int) -> None:
        for obj in sorted(engine.reconfigured_objects(rid)):
            engine.send_fcm(obj, rid)

    def on_fcm(self, engine: EngineView, obj: str, payload: object) -> None:
        assert isinstance(payload, int)
        engine.apply_update(obj, payload)

    def on_all_applied(self, engine: EngineView, rid: int) -> None:
        engine.control_delivered(rid)
        engine.complete(rid)
