"""Run a scenario through the reference in one mode (what ``streamproof oplus`` calls)."""

from __future__ import annotations

import random
from typing import Any

from spec.oplus.scenario import Scenario, instance_of, sort_output
from reference.oplus.executors import RunResult, run_sequential
from reference.oplus.operators.catalogue import build, to_row
from reference.oplus.sn import run_sn_elastic
from reference.oplus.vsn import Request, key_mapping, run_vsn


def execute(scenario: Scenario, mode: str, seed: int = 0) -> RunResult:
    """Execute ``scenario`` in ``mode`` (sequential | sn | vsn). SN applies the
    reconfigurations by state transfer at the reconfiguration point (:mod:`reference.oplus.sn`);
    VSN applies them elastically (Alg. 4-6); sequential is one instance and has none. Requests
    not applied are listed in the result's ``rejected``."""
    built = build(scenario)
    factory = key_mapping(str, instance_of)
    rng = random.Random(seed)
    requests = [Request(r.watermark, r.parallelism) for r in scenario.reconfigurations]
    if mode == "sequential":
        return run_sequential(built.op, built.sources)
    if mode == "sn":
        return run_sn_elastic(built.op, built.sources, scenario.parallelism, factory,
                              requests, rng)
    if mode == "vsn":
        return run_vsn(built.op, built.sources, scenario.parallelism, factory, requests, rng)
    raise ValueError(f"unknown mode {mode!r}")


def run_scenario(scenario: Scenario, mode: str = "sequential", seed: int = 0) -> list[dict[str, Any]]:
    """The scenario's ``--json`` rows: ``{"ts", "key", "value"}`` sorted by (ts, key)."""
    return sort_output([to_row(o) for o in execute(scenario, mode, seed).outputs])
