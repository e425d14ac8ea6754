"""Run a scenario through the reference in one mode (what ``streamproof oplus`` calls)."""

from __future__ import annotations

import random
from typing import Any

from spec.oplus.scenario import Scenario, instance_of, sort_output
from reference.oplus.executors import RunResult, run_sequential, run_sn
from reference.oplus.operators.catalogue import build, to_row
from reference.oplus.vsn import Request, key_mapping, run_vsn


def execute(scenario: Scenario, mode: str, seed: int = 0) -> RunResult:
    """Execute ``scenario`` in ``mode`` (sequential | sn | vsn). SN ignores the
    reconfigurations (SN elasticity needs state transfer, which STRETCH avoids); VSN applies
    them elastically (Alg. 4-6); sequential is one instance."""
    built = build(scenario)
    factory = key_mapping(str, instance_of)
    rng = random.Random(seed)
    if mode == "sequential":
        return run_sequential(built.op, built.sources)
    if mode == "sn":
        return run_sn(built.op, built.sources, scenario.parallelism,
                      factory(0, scenario.parallelism), rng)
    if mode == "vsn":
        requests = [Request(r.watermark, r.parallelism) for r in scenario.reconfigurations]
        return run_vsn(built.op, built.sources, scenario.parallelism, factory, requests, rng)
    raise ValueError(f"unknown mode {mode!r}")


def run_scenario(scenario: Scenario, mode: str = "sequential", seed: int = 0) -> list[dict[str, Any]]:
    """The scenario's ``--json`` rows: ``{"ts", "key", "value"}`` sorted by (ts, key)."""
    return sort_output([to_row(o) for o in execute(scenario, mode, seed).outputs])
