"""Replaying a saved failing case (``--replay FILE`` and the generated regression tests).

The case file names its suite; each suite module provides ``replay(record, faults) ->
(passes, explanation)`` (:data:`REPLAYS`). This module is the documented entry point the
generated regression tests import (``from conformance.replay import replay_file``), so it stays
at this path; like :mod:`conformance.run` it sits above every family.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from spec.errors import InputError

from conformance.core.saved_case import load_case
from conformance.dgs import suite as dgs_suite
from conformance.fries import suite as fries_suite
from conformance.oplus import suite as oplus_suite
from conformance.replay_checks import check_record
from conformance.userjob.suite import replay as replay_job

Replay = Callable[[dict[str, Any], "frozenset[str] | None"], tuple[bool, str]]
"""A suite's replay: ``(record, faults) -> (passes, explanation)``."""

REPLAYS: dict[str, Replay] = {"fries": fries_suite.replay, "dgs": dgs_suite.replay, "oplus": oplus_suite.replay}
"""The replay of each catalogue suite; ``userjob`` (:func:`conformance.userjob.suite.replay`) is
looked up on use, since the user-job machinery imports pyspark."""

SUITES = ("fries", "dgs", "oplus", "userjob")
"""Every suite a saved case can name."""


@dataclass(frozen=True)
class ReplayOutcome:
    """Whether the replayed case passes every oracle, and the explanation if not."""

    ok: bool
    explanation: str


def replay_file(path: str | Path, *, faults: frozenset[str] | None = None) -> ReplayOutcome:
    """Replay the case saved at ``path``; ``faults`` None replays with the recorded faults."""
    record = load_case(path)
    if record["suite"] not in SUITES:
        raise InputError(f"unknown suite {record['suite']!r} (expected one of {sorted(SUITES)})",
                         f"{path}: suite")
    check_record(record, str(path))
    if record["suite"] == "userjob":
        replay: Replay = replay_job
    else:
        replay = REPLAYS[record["suite"]]
    ok, explanation = replay(record, faults)
    return ReplayOutcome(bool(ok), str(explanation))
