"""The Fries rows of ``streamproof prove``: each lemma and theorem at a bound of ``n``
operators (see :mod:`proofs.fries.lemmas` for the queries, docs/proofs.md for the encoding)."""

from __future__ import annotations

from typing import Callable, Sequence

from proofs.fries import lemmas as L
from proofs.fries.dag import KINDS
from proofs.fries.mcs import ALG2, ALG3, ALG4
from proofs.result import Finding, ProofItem

Build = Callable[[int], Sequence[L.Case]]


def _proof(name: str, reference: str, n: int, scope: str, build: Build) -> ProofItem:
    def run(timeout_ms: int) -> Finding:
        return L.run_cases(build(n), timeout_ms)

    return ProofItem(name, reference, f"{scope} with <= {n} operators", "proved", run)


def _counterexample(name: str, reference: str, n: int, scope: str, build: Build) -> ProofItem:
    """An item expected to fail: search the smallest operator count with a counterexample."""
    def run(timeout_ms: int) -> Finding:
        last = Finding("proved")
        for size in range(1, n + 1):
            last = L.run_cases(build(size), timeout_ms)
            if last.status != "proved":
                return last
        return last

    return ProofItem(name, reference, f"{scope} with <= {n} operators", "counterexample", run)


def fries_items(n: int) -> list[ProofItem]:
    """Every Fries claim at bound ``n``. "DAGs" means every DAG with every kind assignment,
    unique flag and reconfiguration set; "one-to-one DAGs" restricts kinds to source and
    one-to-one (the setting of Fries §5)."""
    o2o, every = L.ONE_TO_ONE_KINDS, KINDS
    return [
        _proof("MCS is unique and minimal; Alg. 1 computes it", "Fries Lemma 5.5, Alg. 1", n,
               "DAGs x vertex sets", L.mcs_unique_minimal),
        _proof("every MCS component holds a reconfigured operator (Alg. 2)", "Fries Lemma 5.6",
               n, "one-to-one DAGs", lambda k: L.components_hold_reconfigured(k, o2o, ALG2)),
        _proof("every MCS component holds a reconfigured operator (Alg. 3)", "Fries Lemma 6.1",
               n, "DAGs", lambda k: L.components_hold_reconfigured(k, every, ALG3)),
        _proof("every MCS component holds a reconfigured operator (Alg. 4 pruning)",
               "Fries Lemma 6.1 + Alg. 4", n, "DAGs",
               lambda k: L.components_hold_reconfigured(k, every, ALG4)),
        _proof("a transaction overlaps at most one component (Alg. 2)", "Fries Lemma 5.7", n,
               "one-to-one DAGs", lambda k: L.one_component_per_transaction(k, o2o, ALG2)),
        _proof("a transaction overlaps at most one component (Alg. 3)", "Fries Lemma 6.2", n,
               "DAGs", lambda k: L.one_component_per_transaction(k, every, ALG3)),
        _proof("a transaction overlaps at most one component (Alg. 4 pruning)",
               "Fries Lemma 6.2 + Alg. 4", n, "DAGs",
               lambda k: L.one_component_per_transaction(k, every, ALG4)),
        _proof("a component head receives at most one tuple per transaction (Alg. 3)",
               "Fries Lemma 6.3", n, "DAGs", lambda k: L.head_receives_one_tuple(k, every, ALG3)),
        _proof("a component head receives at most one tuple per transaction (Alg. 4 pruning)",
               "Fries Lemma 6.3 + Alg. 4", n, "DAGs",
               lambda k: L.head_receives_one_tuple(k, every, ALG4)),
        _proof("Fries (Alg. 2) admits only conflict-serializable schedules", "Fries Theorem 5.8",
               n, "one-to-one DAGs", lambda k: L.non_serializable(k, o2o, ALG2)),
        _proof("Fries (Alg. 3) admits only conflict-serializable schedules", "Fries Theorem 6.4",
               n, "DAGs", lambda k: L.non_serializable(k, every, ALG3)),
        _proof("Fries (Alg. 4 pruning) admits only conflict-serializable schedules",
               "Fries Theorem 6.4 + Alg. 4, §6.3", n, "DAGs",
               lambda k: L.non_serializable(k, every, ALG4)),
        _counterexample("Alg. 2 on one-to-many dataflows admits a non-serializable schedule",
                        "Fries §6.1, Fig. 8", n, "DAGs",
                        lambda k: L.non_serializable(k, every, ALG2,
                                                              reconfigurable_sources=False)),
        _counterexample("the naive FCM scheduler admits a non-serializable schedule",
                        "Fries §4.1, Fig. 2", n, "DAGs",
                        lambda k: L.non_serializable(k, every, None,
                                                              reconfigurable_sources=False)),
    ]
