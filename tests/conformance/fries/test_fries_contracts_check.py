"""The Fries contracts check (``conformance.fries.checks.contracts``, run by the Fries suite,
no Spark job) holds on the shipped keys and faults and names, on hand-built bad versions:
float keys hashed like their integer part, every key routed to one partition, and unknown
fault names accepted (docs/spark.md, "Keys" and "Seeded faults"). A consistent but wrong
routing gives consistent runs, so no output oracle sees it."""

from __future__ import annotations

import math

import pytest

from conformance.core.results import SuiteResult
from conformance.fries.checks import contracts as contracts_check
from spark_impl import faults, keys


def test_contracts_check_sees_broken_key_routing_and_accepted_fault_typos(monkeypatch: pytest.MonkeyPatch) -> None:
    result = SuiteResult("fries", "spark", 0)
    assert not contracts_check.run_contracts_check(result) and result.failed == 0 and result.cases > 40
    real_hash = keys.stable_hash
    monkeypatch.setattr(keys, "stable_hash", lambda key: real_hash(int(key) if isinstance(key, float) and
                                                                   math.isfinite(key) else key))
    assert "the same stable hash" in (contracts_check.key_problem() or "")
    monkeypatch.setattr(keys, "stable_hash", real_hash)
    monkeypatch.setattr(keys, "route", lambda key, n: 0)
    assert "expected 1" in (contracts_check.key_problem() or "")
    monkeypatch.setattr(faults, "check_faults", lambda names: None)
    assert "were accepted" in (contracts_check.fault_problem() or "")
    assert contracts_check.run_contracts_check(result) and result.failed == 3 and result.failures  # keys, hash, faults
