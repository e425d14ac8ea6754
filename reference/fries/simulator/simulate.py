"""The public entry point: :func:`simulate`."""

from __future__ import annotations

from spec.fries.scenario import Scenario

from reference.fries.schedulers import make_scheduler
from reference.fries.simulator.engine import Engine
from reference.fries.simulator.result import SimulationResult


def simulate(scenario: Scenario, scheduler: str, *, checkpoint_interval: float | None = None,
             checkpoint_rule: bool = True, **options: bool) -> SimulationResult:
    """Run ``scenario`` under ``scheduler`` (``"naive"``, ``"multi-version"``, ``"epoch"`` or
    ``"fries"``) in the deterministic discrete-event simulator.

    ``options`` are Fries' switches (``prune_edgewise``, ``prune_uniqueness``,
    ``one_to_many``, all default True). With ``checkpoint_interval`` the controller takes a
    checkpoint that often (§7.3), applying the cancel-and-hold rule unless
    ``checkpoint_rule=False``. Raises :class:`~spec.errors.InputError` for an unknown
    scheduler or option; a run in which some reconfiguration never completes raises
    RuntimeError (a scheduler bug, never a legitimate outcome)."""
    engine = Engine(scenario, make_scheduler(scheduler, **options),
                    checkpoint_interval=checkpoint_interval, checkpoint_rule=checkpoint_rule)
    return engine.run()
