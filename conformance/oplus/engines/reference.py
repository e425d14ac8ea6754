"""The reference O+ executions as engines under test: shared-nothing (STRETCH Alg. 1-2) and
elastic virtual shared-nothing with the scenario's reconfigurations (Alg. 3-6, Theorem 3),
each judged against the sequential reference."""

from __future__ import annotations

from typing import Any

from spec.oplus.scenario import parse_scenario

from conformance.oplus.oracles import Row, rows_of


MODES = {"reference SN vs sequential": "sn", "reference elastic VSN vs sequential": "vsn"}


def reference_rows(case: dict[str, Any], mode: str, seed: int = 0) -> list[Row]:
    """The reference's output rows for ``case`` in ``mode`` (emission order)."""
    return rows_of(parse_scenario(case), mode, seed)
