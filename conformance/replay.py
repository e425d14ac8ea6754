"""Replaying a saved failing case (``--replay FILE`` and the generated regression tests).

The case file names its suite; each suite module provides ``replay(record, faults) ->
(passes, explanation)``. Suites are imported on demand so replaying a Fries case never loads
the DGS machinery and vice versa.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from spec.errors import InputError

from conformance.core.saved_case import load_case

_SUITE_MODULES = {"fries": "conformance.fries.suite", "dgs": "conformance.dgs.suite",
                  "oplus": "conformance.oplus.suite", "userjob": "conformance.userjob.suite"}


@dataclass(frozen=True)
class ReplayOutcome:
    """Whether the replayed case passes every oracle, and the explanation if not."""

    ok: bool
    explanation: str


def replay_file(path: str | Path, *, faults: frozenset[str] | None = None) -> ReplayOutcome:
    """Replay the case saved at ``path``; ``faults`` None replays with the recorded faults."""
    record = load_case(path)
    module_name = _SUITE_MODULES.get(record["suite"])
    if module_name is None:
        raise InputError(f"unknown suite {record['suite']!r} (expected one of {sorted(_SUITE_MODULES)})",
                         f"{path}: suite")
    module = importlib.import_module(module_name)
    ok, explanation = module.replay(record, faults)
    return ReplayOutcome(bool(ok), str(explanation))
