"""A deterministic discrete-event simulator of reconfigurations in a dataflow (Fries §2-8).

``simulate(scenario, scheduler)`` runs a :class:`~spec.fries.scenario.Scenario` under one of
the schedulers of :mod:`reference.fries.schedulers` and returns the outputs, the schedule
(per-object logs), the final states and the reconfiguration delays. Modules: ``clock``
(event priorities), ``engine`` (events, channels, processing),
``checkpoints`` (§7.3), ``result``, ``simulate``, ``consistency`` (judging a run against the
spec). What the schedulers share with the engine lives below this package (it imports the
schedulers): :mod:`reference.fries.topology` (objects and channels, §7.1/§7.2) and
:mod:`reference.fries.messages`. See docs/fries-simulator.md.
"""

from reference.fries.simulator.checkpoints import inconsistent_checkpoints
from reference.fries.simulator.consistency import Consistency, check_run
from reference.fries.simulator.result import CheckpointRecord, SimulationResult, SimulationStats
from reference.fries.simulator.simulate import simulate

__all__ = ["CheckpointRecord", "Consistency", "check_run", "SimulationResult", "SimulationStats", "inconsistent_checkpoints", "simulate"]
