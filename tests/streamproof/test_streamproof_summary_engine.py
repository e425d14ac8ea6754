"""``streamproof.summary.print_summary``: the line under the table names "the engine the Fries
executor ran on" (``FRIES_SUITES``: the catalogue's Fries suite and a user job, ``--job``), and
a run without either (``--operator``, ``--suite dgs``) names none rather than ``-``."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.results import CheckResult, SuiteResult
from streamproof.summary import print_summary


@pytest.mark.parametrize("results, line", [
    ([SuiteResult("userjob", "spark", 0, [CheckResult("spark vs reference (job.py:job)")])],
     "seed 0; fries engine: spark; injected faults: none"),
    ([SuiteResult("fries", "spark-streaming", 3, faults=("missing-alignment",)), SuiteResult("dgs", "spark", 3)],
     "seed 3; fries engine: spark-streaming; injected faults: missing-alignment"),
    ([SuiteResult("oplus", "spark-streaming", 0, [CheckResult("reference SN vs sequential")])],
     "seed 0; injected faults: none"),
])
def test_the_summary_names_the_engine_the_fries_executor_ran_on(results: list[SuiteResult], line: str,
                                                                capsys: Any) -> None:
    print_summary(results)
    assert line in capsys.readouterr().out.splitlines()
