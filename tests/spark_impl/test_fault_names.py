"""Seeded-fault names (:func:`spark_impl.faults.check_faults`): every seeded fault is accepted and
an unknown name is bad input (``InputError``). Accepting it would make ``--inject-fault
naive-typo`` run the correct executor and report "no violation": a vacuous "every seeded fault
is caught"."""

from __future__ import annotations

import pytest

from spec.errors import InputError

from spark_impl.faults import FAULTS, check_faults


def test_every_seeded_fault_is_accepted() -> None:
    check_faults(sorted(FAULTS))


@pytest.mark.parametrize("wrong", [["no-such-fault"], [*sorted(FAULTS)[:1], "naive-typo"]])
def test_an_unknown_fault_name_is_bad_input(wrong: list[str]) -> None:
    with pytest.raises(InputError):
        check_faults(wrong)
