"""The O+ suite's further checks beyond the engine-vs-oracle loop: seeded faults, handovers and the live handler on the pure-Python stand-in.

Not here: the differential loop itself (:mod:`conformance.oplus.suite`).
"""

from __future__ import annotations

import time
from typing import Callable

from conformance.core.results import CheckResult, FailureReport, SuiteResult
from conformance.core.watchdog import bounded


def append_check(result: SuiteResult, name: str, cases: int, problems: Callable[[], list[str]]) -> None:
    """Append the Spark-free check ``name`` to ``result``: ``problems()`` (a crash of the
    executor's code is a problem too) each count as a failed ``contract``; a failure reports
    the first five."""
    start = time.monotonic()

    try:
        found = bounded(problems, name)
    except Exception as error:  # noqa: BLE001 - a crash (or a hang) of the front end's code is a finding
        found = [f"raised {type(error).__name__}: {error}"]
    checked = CheckResult(name, cases=cases, failed=len(found), elapsed_s=time.monotonic() - start)
    result.checks.append(checked)
    if found:
        checked.oracle_failures["contract"] += len(found)
        result.failures.append(FailureReport(name, 0, ("contract",), found[0], 1, 1, 0, {"problems": found[:5]}))
