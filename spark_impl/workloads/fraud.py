"""The payment-fraud-detection pipeline of Fries Fig. 1 / Table 1 as user operators.

``payments -> FD1 (per customer) -> FD2 (per merchant) -> Combiner -> alerts``. FD1 keeps the
customer's last 5 amounts and attaches p1; FD2 keeps the merchant's last 5 amounts and
attaches p2; the combiner averages with weights [0.4, 0.6]. The reconfiguration of Table 1
hot-swaps FD2's model (it now also attaches p3 from the merchant's last 10 amounts; the state
transformation pads the 5-amount history to 10) and the combiner's weights to
[0.4, 0.4, 0.2]. A combiner that receives a tuple of the other version (two probabilities
for three weights, or three for two) emits a ``schema-mismatch`` record - the anomaly of
Fries Fig. 2 that a consistent scheduler never produces.

The "models" are small deterministic scoring functions (a logistic of the amount's z-score
against the history) with a configurable per-tuple cost standing in for inference time.
"""

from __future__ import annotations

import math
import time
from typing import Any

from spec.fries.dataflow import Dataflow, dataflow
from spark_impl.reconfig.model import GeneratedSource, Job, Request, Timing, UserOperator, user_job, user_update

CUSTOMERS = 64
MERCHANTS = 16


def payment(index: int) -> tuple[int, Any]:
    """Payment ``index``: key = customer, value = (customer, merchant, amount)."""
    customer = (index * 7919) % CUSTOMERS
    merchant = (index * 104729 + 13) % MERCHANTS
    amount = float((index * 2654435761) % 997) / 10.0 + (250.0 if index % 97 == 0 else 0.0)
    return customer, (customer, merchant, amount)


def _score(history: list[float], amount: float) -> float:
    if not history:
        return 0.5
    mean = sum(history) / len(history)
    spread = math.sqrt(sum((h - mean) ** 2 for h in history) / len(history)) or 1.0
    return 1.0 / (1.0 + math.exp(-(amount - mean) / spread))


class FD1:
    """Customer model: attaches p1 and re-keys the tuple by merchant."""

    def __init__(self, cost_ms: float) -> None:
        self.cost = cost_ms / 1000.0

    def __call__(self, state: Any, key: int, value: Any) -> tuple[Any, list[tuple[int, Any]]]:
        customer, merchant, amount = value
        history = list(state or [])
        p1 = _score(history, amount)
        if self.cost:
            time.sleep(self.cost)
        return (history + [amount])[-5:], [(merchant, (customer, merchant, amount, (p1,)))]


class FD2:
    """Merchant model, old (p2 from 5 amounts) or new (p2 and p3 from 10 amounts)."""

    def __init__(self, cost_ms: float, new: bool) -> None:
        self.cost, self.new = cost_ms / 1000.0, new

    def __call__(self, state: Any, key: int, value: Any) -> tuple[Any, list[tuple[int, Any]]]:
        customer, merchant, amount, probs = value
        history = list(state or [])
        if self.cost:
            time.sleep(self.cost)
        extra: tuple[float, ...]
        if self.new:
            extra = (_score(history[-5:], amount), _score(history, amount))
            keep = 10
        else:
            extra = (_score(history, amount),)
            keep = 5
        return (history + [amount])[-keep:], [(customer, (customer, merchant, amount, probs + extra))]


def pad_history(state: Any) -> Any:
    """FD2's state transformation: a 5-amount history becomes a 10-slot one (oldest repeated)."""
    history = list(state or [])
    return ([history[0]] * (10 - len(history)) + history) if history else history


class Combiner:
    """Weighted average of the attached probabilities; flags a schema mismatch."""

    def __init__(self, weights: tuple[float, ...]) -> None:
        self.weights = weights

    def __call__(self, state: Any, key: int, value: Any) -> tuple[Any, list[tuple[int, Any]]]:
        customer, merchant, amount, probs = value
        if len(probs) != len(self.weights):
            return (state or 0) + 1, [(key, ("schema-mismatch", len(probs), len(self.weights)))]
        score = sum(w * p for w, p in zip(self.weights, probs))
        return (state or 0) + 1, [(key, ("fraud" if score > 0.8 else "ok", round(score, 4), amount))]


def fraud_flow() -> Dataflow:
    """The DAG of Fig. 1."""
    return dataflow([("payments", "source"), ("FD1", "one-to-one"), ("FD2", "one-to-one"),
                     ("Combiner", "one-to-one")],
                    [("payments", "FD1"), ("FD1", "FD2"), ("FD2", "Combiner")])


def fraud_job(n: int, *, fd_cost_ms: float = 2.0, workers: int = 2, batch_size: int = 400) -> Job:
    """The pipeline over ``n`` generated payments."""
    flow = fraud_flow()
    ops = {"FD1": UserOperator(flow.kind("FD1"), FD1(fd_cost_ms / 4)),
           "FD2": UserOperator(flow.kind("FD2"), FD2(fd_cost_ms, new=False)),
           "Combiner": UserOperator(flow.kind("Combiner"), Combiner((0.4, 0.6)))}
    return user_job(flow, ops, GeneratedSource("payments", n, payment),
                    parallelism={"FD1": workers, "FD2": workers, "Combiner": workers},
                    timing=Timing(batch_size=batch_size))


def model_swap(fd_cost_ms: float = 2.0) -> Request:
    """Table 1's reconfiguration: new FD2 model (+p3, cheaper) and new combiner weights."""
    flow = fraud_flow()
    return Request({
        "FD2": user_update(flow, "FD2", FD2(fd_cost_ms / 2, new=True), pad_history),
        "Combiner": user_update(flow, "Combiner", Combiner((0.4, 0.4, 0.2)), _same),
    })


def _same(state: Any) -> Any:
    return state
