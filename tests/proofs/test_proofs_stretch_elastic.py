"""Bounded, exhaustive check of STRETCH Theorem 3 with the corrected Alg. 4
(proofs/stretch_elastic.py): every small input, initial parallelism, list of up to two
reconfiguration requests and mapping, under VSN, outputs O+'s output multiset."""

from __future__ import annotations

import pytest

from proofs.stretch_elastic import check_theorem_3
from reference.oplus.operators.joins import scalejoin
from reference.oplus.operators.sliding_sum import sliding_sum
from spec.oplus.model import WindowType
from spec.oplus.windows import WindowSpec


@pytest.mark.parametrize("window_type", [WindowType.SINGLE, WindowType.MULTI])
def test_theorem_3_on_every_small_elastic_run(window_type: WindowType) -> None:
    result = check_theorem_3(sliding_sum(WindowSpec(1, 2), window_type), seeds=1, budget=300.0)
    assert result.counterexample is None, result.counterexample
    assert result.complete and result.inputs == 27
    assert result.reconfigured > result.runs // 10  # reconfigurations really happened


@pytest.mark.slow
def test_theorem_3_scalejoin_two_inputs() -> None:
    result = check_theorem_3(scalejoin(2, 2, 1), sources=2, budget=900.0)
    assert result.complete and result.counterexample is None and result.reconfigured > 0
