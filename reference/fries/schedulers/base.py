"""The interface between the simulator's engine and a reconfiguration scheduler.

The engine (:mod:`reference.fries.simulator.engine`) moves data: ingestion, FIFO channels,
one tuple at a time per object, blocking flushes. A scheduler decides *when each object
applies its function update* by reacting to three events - the controller starting a
reconfiguration, an FCM reaching an object, an epoch marker reaching an object - and calling
back :meth:`Engine.apply_update`, :meth:`Engine.send_fcm`, :meth:`Engine.send_marker`,
:meth:`Engine.block` / :meth:`Engine.unblock`. The default hooks here are those of every
single-version scheduler; the multi-version scheduler overrides the data hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from spec.fries.scenario import Function
from spec.fries.schedule import Operation

if TYPE_CHECKING:
    from reference.fries.simulator.engine import Engine, LogEntry
    from reference.fries.simulator.messages import Data


class Scheduler:
    """Base class: hooks with the single-version defaults. ``name`` is the CLI name."""

    name = "base"

    def start(self, engine: "Engine", rid: int) -> None:
        """The controller starts reconfiguration ``rid`` (1-based) at ``engine.now``."""
        raise NotImplementedError

    def on_fcm(self, engine: "Engine", obj: str, payload: object) -> None:
        """An FCM sent with :meth:`Engine.send_fcm` is handled by ``obj`` (after the tuple it
        was processing, Fries §4.1)."""

    def on_marker(self, engine: "Engine", obj: str, sender: str, rid: int) -> None:
        """``obj`` takes the epoch marker of ``rid`` from the channel ``sender -> obj``."""

    def on_all_applied(self, engine: "Engine", rid: int) -> None:
        """Every object of ``rid``'s operators applied its update: by default the
        reconfiguration is complete and the next queued one may start."""
        engine.complete(rid)

    # --- data hooks (multi-version overrides them) -----------------------------------------

    def source_version(self, engine: "Engine", source_obj: str | None) -> int:
        """The version tag of a tuple leaving ``source_obj`` (None: a blocking flush)."""
        return 0

    def function_for(self, engine: "Engine", obj: str, msg: "Data") -> Function:
        """The function ``obj`` applies to ``msg``: its current one."""
        return engine.functions[obj]

    def add_state(self, engine: "Engine", op: str, msg: "Data") -> None:
        """Add ``msg``'s value to its key's state at operator ``op`` (Fries' catalogue: the
        state is the sum of the values processed, spec.fries.scenario)."""
        engine.state[(op, msg.key)] = engine.state.get((op, msg.key), 0) + msg.value

    def state_of(self, engine: "Engine", op: str, key: int) -> int:
        """The current state of ``key`` at ``op`` (read by a blocking flush)."""
        return engine.state[(op, key)]

    def final_states(self, engine: "Engine") -> dict[tuple[str, int], int]:
        """Every (operator, key) state at the end of the run."""
        return dict(engine.state)

    def on_processed(self, engine: "Engine", obj: str, msg: "Data") -> None:
        """``obj`` finished processing ``msg`` at ``engine.now``."""

    def arrange(self, engine: "Engine", obj: str, entries: Iterable["LogEntry"]) -> list["LogEntry"]:
        """The schedule's log of ``obj`` as entries: its operations in execution order."""
        return list(entries)

    def arrange_log(self, engine: "Engine", obj: str, entries: Iterable["LogEntry"]) -> tuple[Operation, ...]:
        """The schedule's log of ``obj``: the operations of :meth:`arrange`."""
        return tuple(entry.operation for entry in self.arrange(engine, obj, entries))

    def delays(self, engine: "Engine") -> tuple[float, ...]:
        """Per reconfiguration: request time to the last update applied."""
        return tuple(engine.last_applied(rid) - engine.request_time[rid]
                     for rid in range(1, len(engine.scenario.reconfigurations) + 1))
