"""Fraud detection (DGS §4.1, Appendix E): a model retrained at every rule.

Events: ``("txn", v)`` and ``("rule", r)``; tags ``"txn"`` and ``"rule"``. Transactions are
independent of each other; a rule depends on everything. On a rule the program outputs
``("aggregate", sum of transactions since the last rule)`` and retrains the model to
``(that sum + r) % MODULUS``. A transaction ``v`` with ``v % MODULUS == model`` is flagged
``("fraud", v)``.

State: ``(sum since last rule, model, epoch)`` where ``epoch`` counts the rules processed.
Fork: both sides get the model (§4.4: "the fork also duplicates the sum of the previous
transaction and last rule modulo 1000"); the running sum goes to the side that processes
rules (the left one if neither does), the other starts at 0. Join: add the sums, keep the
model of the side with the larger epoch (the side that processed a rule; left on a tie).
Without the epoch a join cannot tell which side's model is newer - ``check-dgs`` finds the C1
violation of a join that always keeps the left model. States compare with ``==``.
"""

from __future__ import annotations

from hypothesis import strategies as st

MODULUS = 4
Event = tuple[str, int]
State = tuple[int, int, int]


class FraudDetection:
    """Fraud detection with a shared, periodically retrained model."""

    tags = frozenset({"txn", "rule"})

    @staticmethod
    def tag(event: Event) -> str:
        return event[0]

    @staticmethod
    def depends(t1: str, t2: str) -> bool:
        return "rule" in (t1, t2)

    @staticmethod
    def init() -> State:
        return (0, 0, 0)

    @staticmethod
    def update(state: State, event: Event) -> State:
        total, model, epoch = state
        if event[0] == "txn":
            return (total + event[1], model, epoch)
        return (0, (total + event[1]) % MODULUS, epoch + 1)

    @staticmethod
    def out(state: State, event: Event) -> list[tuple[str, int]]:
        total, model, _ = state
        if event[0] == "rule":
            return [("aggregate", total)]
        return [("fraud", event[1])] if event[1] % MODULUS == model else []

    @staticmethod
    def fork(state: State, left: frozenset[str], right: frozenset[str]) -> tuple[State, State]:
        total, model, epoch = state
        if "rule" in right:
            return (0, model, epoch), (total, model, epoch)
        return (total, model, epoch), (0, model, epoch)

    @staticmethod
    def join(left: State, right: State) -> State:
        newer = right if right[2] > left[2] else left
        return (left[0] + right[0], newer[1], newer[2])

    @staticmethod
    def events() -> st.SearchStrategy[Event]:
        return st.tuples(st.sampled_from(("txn", "txn", "txn", "rule")), st.integers(0, 12))


class ForgetfulFraud(FraudDetection):
    """INCONSISTENT: fork gives the right side a fresh model 0, so transactions processed on
    the right wire are classified with the wrong model. Only the *mirrored* C1 (an update on
    the right wire) catches it: C2 holds (join keeps the left model) and so does Def. 2.3's
    left-wire C1."""

    @staticmethod
    def fork(state: State, left: frozenset[str], right: frozenset[str]) -> tuple[State, State]:
        total, model, epoch = state
        if "rule" in right:
            return (0, model, epoch), (total, 0, epoch)
        return (total, model, epoch), (0, 0, epoch)
