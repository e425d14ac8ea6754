"""The Fries rows of ``streamproof prove``: each lemma and theorem at a bound of ``n``
operators (see :mod:`proofs.fries.lemmas` for the queries, docs/proofs.md for the encoding)."""

from __future__ import annotations

from typing import Callable, Sequence

from proofs.fries import lemmas as L
from proofs.fries.dag import KINDS
from proofs.fries.mcs import ALG2, ALG3, ALG4
from proofs.result import Finding, ProofItem

Build = Callable[[int], Sequence[L.Case]]


#: What every Fries row quantifies over and assumes (docs/proofs.md, section 1).
_DAGS = ("every DAG with at most {n} operators (edges over a topological numbering, every kind "
         "of {kinds}, every unique flag, every reconfiguration set, sources included)")
_ASSUMED = ("one reconfiguration at a time, one worker per operator (workers: see "
            "`streamproof modelcheck`), no failures")
_MCS_MODEL = ("the symbolic MCS of proofs/fries/mcs.py, pinned to reference.fries.mcs on random "
              "DAGs by tests/proofs/test_proofs_fries.py")
_FLOW_MODEL = ("what one transaction's tuples can reach (proofs/fries/flow.py: a chain, or a "
               "branch at a one-to-many/replicate operator along exact paths) against the "
               "symbolic MCS")
_SCHEDULE_MODEL = ("a transaction's tuple tree (proofs/fries/flow.py): Z3 proves no transaction "
                   "reaches reconfigured operators through two MCS entries; that every "
                   "interleaving of tuples, FIFO channels, FCMs, markers and alignment reduces "
                   "to this is checked by the explicit-state model checker "
                   "(`streamproof modelcheck`, proofs/fries/modelcheck: every dataflow up to 4 "
                   "objects with workers, every interleaving), not by Z3")


def scope_text(n: int, one_to_one: bool, model: str, extra: str = "") -> str:
    """The ``scope`` of a Fries row."""
    kinds = "source/one-to-one" if one_to_one else "source/one-to-one/one-to-many/replicate/blocking"
    parts = ["quantified over " + _DAGS.format(n=n, kinds=kinds), "model: " + model,
             "assumed: " + _ASSUMED]
    return "; ".join(parts + ([extra] if extra else []))


def _proof(name: str, reference: str, n: int, scope: str, build: Build,
           model: str = _MCS_MODEL, extra: str = "") -> ProofItem:
    def run(timeout_ms: int) -> Finding:
        return L.run_cases(build(n), timeout_ms)

    return ProofItem(name, reference, f"{scope} with <= {n} operators", "proved", run,
                     scope_text(n, scope.startswith("one-to-one"), model, extra))


def _counterexample(name: str, reference: str, n: int, scope: str, build: Build) -> ProofItem:
    """An item expected to fail: search the smallest operator count with a counterexample."""
    def run(timeout_ms: int) -> Finding:
        last = Finding("proved")
        for size in range(1, n + 1):
            last = L.run_cases(build(size), timeout_ms)
            if last.status != "proved":
                return last
        return last

    return ProofItem(name, reference, f"{scope} with <= {n} operators", "counterexample", run,
                     scope_text(n, False, _SCHEDULE_MODEL, "sources not reconfigured; the "
                                "smallest operator count with a counterexample is reported"))


def fries_items(n: int) -> list[ProofItem]:
    """Every Fries claim at bound ``n``. "DAGs" means every DAG with every kind assignment,
    unique flag and reconfiguration set; "one-to-one DAGs" restricts kinds to source and
    one-to-one (the setting of Fries §5).

    Theorem 5.8 has no row of its own: on one-to-one DAGs a transaction is a chain, and
    "no chain enters the MCS twice" is Def. 5.4's convexity restated, which the Lemma 5.7 row
    already proves; what Theorem 5.8 adds is the reduction from interleavings, which the model
    checker checks (its ``fries-alg2`` row), so the Lemma 5.7 row carries both."""
    o2o, every = L.ONE_TO_ONE_KINDS, KINDS
    return [
        _proof("MCS is unique and minimal; Alg. 1 computes it", "Fries Lemma 5.5, Alg. 1", n,
               "DAGs x vertex sets", L.mcs_unique_minimal,
               extra="also every vertex set V', not only Fries' seed sets"),
        _proof("every MCS component holds a reconfigured operator (Alg. 2)", "Fries Lemma 5.6",
               n, "one-to-one DAGs", lambda k: L.components_hold_reconfigured(k, o2o, ALG2)),
        _proof("every MCS component holds a reconfigured operator (Alg. 3)", "Fries Lemma 6.1",
               n, "DAGs", lambda k: L.components_hold_reconfigured(k, every, ALG3)),
        _proof("every MCS component holds a reconfigured operator (Alg. 4 pruning)",
               "Fries Lemma 6.1 + Alg. 4", n, "DAGs",
               lambda k: L.components_hold_reconfigured(k, every, ALG4)),
        _proof("a transaction overlaps at most one component (Alg. 2), hence Fries (Alg. 2) "
               "admits only conflict-serializable schedules",
               "Fries Lemma 5.7, Theorem 5.8", n,
               "one-to-one DAGs", lambda k: [*L.one_component_per_transaction(k, o2o, ALG2),
                                             *L.non_serializable(k, o2o, ALG2)],
               model=_SCHEDULE_MODEL,
               extra="Theorem 5.8 = this lemma + the model-checked reduction (on one-to-one "
               "DAGs a transaction is a chain; a chain leaving and re-entering the MCS "
               "contradicts Def. 5.4)"),
        _proof("a transaction overlaps at most one component (Alg. 3)", "Fries Lemma 6.2", n,
               "DAGs", lambda k: L.one_component_per_transaction(k, every, ALG3),
               model=_FLOW_MODEL),
        _proof("a transaction overlaps at most one component (Alg. 4 pruning)",
               "Fries Lemma 6.2 + Alg. 4", n, "DAGs",
               lambda k: L.one_component_per_transaction(k, every, ALG4),
               model=_FLOW_MODEL),
        _proof("a component head receives at most one tuple per transaction (Alg. 3)",
               "Fries Lemma 6.3", n, "DAGs", lambda k: L.head_receives_one_tuple(k, every, ALG3),
               model=_FLOW_MODEL),
        _proof("a component head receives at most one tuple per transaction (Alg. 4 pruning)",
               "Fries Lemma 6.3 + Alg. 4", n, "DAGs",
               lambda k: L.head_receives_one_tuple(k, every, ALG4), model=_FLOW_MODEL),
        _proof("Fries (Alg. 3) admits only conflict-serializable schedules", "Fries Theorem 6.4",
               n, "DAGs", lambda k: L.non_serializable(k, every, ALG3), model=_SCHEDULE_MODEL),
        _proof("Fries (Alg. 4 pruning) admits only conflict-serializable schedules",
               "Fries Theorem 6.4 + Alg. 4, §6.3", n, "DAGs",
               lambda k: L.non_serializable(k, every, ALG4), model=_SCHEDULE_MODEL),
        _counterexample("Alg. 2 on one-to-many dataflows admits a non-serializable schedule",
                        "Fries §6.1, Fig. 8", n, "DAGs",
                        lambda k: L.non_serializable(k, every, ALG2,
                                                              reconfigurable_sources=False)),
        _counterexample("the naive FCM scheduler admits a non-serializable schedule",
                        "Fries §4.1, Fig. 2", n, "DAGs",
                        lambda k: L.non_serializable(k, every, None,
                                                              reconfigurable_sources=False)),
    ]
