"""The public entry point: :func:`simulate`."""

from __future__ import annotations

from spec.errors import InputError
from spec.fries.catalogue import order_sensitive
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
    RuntimeError (a scheduler bug, never a legitimate outcome).

    The multi-version scheduler keeps one state per version and key and folds them at the
    end, which only a commutative state allows: a scenario with an order-sensitive function
    (``fold``, ``digest``) is refused for it (InputError)."""
    if scheduler == "multi-version":
        functions = [*scenario.functions.values(),
                     *(u.function for r in scenario.reconfigurations for u in r.updates.values())]
        if any(order_sensitive(f) for f in functions):
            raise InputError("the multi-version scheduler keeps per-version sums: it supports only the "
                             "commutative catalogue functions, not fold or digest", "scheduler")
    engine = Engine(scenario, make_scheduler(scheduler, **options),
                    checkpoint_interval=checkpoint_interval, checkpoint_rule=checkpoint_rule)
    return engine.run()
