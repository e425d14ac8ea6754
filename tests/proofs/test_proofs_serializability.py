"""The SMT serializability checker (proofs.serializability) against the reference checker and
brute force over serial orders, on random schedules (Fries Def. 4.6-4.9)."""

from __future__ import annotations

from itertools import permutations

from hypothesis import given, settings, strategies as st

from proofs.serializability import precedence_pairs, serial_order_iff_acyclic, smt_serializable
from proofs.z3util import Answer
from reference.fries.serializability import check_serializability
from spec.fries.schedule import Operation, Schedule, validate_transaction_types


@st.composite
def schedules(draw: st.DrawFn) -> Schedule:
    """Random per-object logs over a few data and update transactions (an update touches an
    object at most once, as Def. 4.5 requires)."""
    objects = [f"O{i}" for i in range(draw(st.integers(1, 4)))]
    data = [f"t{i}" for i in range(draw(st.integers(1, 4)))]
    updates = [f"R{i}" for i in range(draw(st.integers(0, 2)))]
    logs: dict[str, tuple[Operation, ...]] = {}
    for obj in objects:
        ops = [Operation(t) for t in draw(st.lists(st.sampled_from(data), max_size=5))]
        if updates:
            ops += [Operation(u, update=True) for u in draw(st.sets(st.sampled_from(updates)))]
        logs[obj] = tuple(draw(st.permutations(ops)))
    schedule = Schedule(logs)
    validate_transaction_types(schedule)
    return schedule


def brute_force(schedule: Schedule) -> bool:
    """Def. 4.9 literally: some serial order respects every conflicting pair."""
    pairs = precedence_pairs(schedule)
    for order in permutations(schedule.transactions()):
        place = {t: i for i, t in enumerate(order)}
        if all(place[a] < place[b] for a, b in pairs):
            return True
    return False


@settings(max_examples=150)
@given(schedules())
def test_smt_agrees_with_reference_and_brute_force(schedule: Schedule) -> None:
    smt = smt_serializable(schedule)
    assert smt.serializable == check_serializability(schedule).serializable
    assert smt.serializable == brute_force(schedule)
    pairs = set(precedence_pairs(schedule))
    if smt.serializable:
        assert smt.serial_order is not None
        assert sorted(smt.serial_order) == sorted(schedule.transactions())
        place = {t: i for i, t in enumerate(smt.serial_order)}
        assert all(place[a] < place[b] for a, b in pairs)
    else:
        assert smt.cycle is not None and len(smt.cycle) >= 2
        ring = list(smt.cycle) + [smt.cycle[0]]
        assert all((a, b) in pairs for a, b in zip(ring, ring[1:]))


def test_fig2_split_transaction_is_not_serializable() -> None:
    schedule = Schedule({"A": (Operation("t"), Operation("R", True)),
                         "B": (Operation("R", True), Operation("t"))})
    verdict = smt_serializable(schedule)
    assert not verdict.serializable
    assert set(verdict.cycle or ()) == {"t", "R"}


def test_serial_order_iff_acyclic_is_proved_and_not_vacuous() -> None:
    assert serial_order_iff_acyclic(4).answer is Answer.UNSAT
    # with one round of closure, a 3-cycle is not seen as a cycle: the "proof" must fail
    assert serial_order_iff_acyclic(3, closure_rounds=1).answer is Answer.SAT
