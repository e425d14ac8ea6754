"""A user's job for ``streamproof conformance --job examples/fraud_job.py:job``.

The payment-fraud pipeline of Fries Fig. 1 written with the production API only
(``spark_impl`` and the standard library), with string keys, order-sensitive state and a model
swap whose state transformation matters:

    payments -> FD1 (per customer "c07") -> FD2 (per merchant "m03") -> Combiner (per customer)

* FD1 keeps the customer's last 5 amounts and an exponentially weighted mean (both depend on
  the order the customer's payments arrive in) and attaches p1;
* FD2 keeps the merchant's amounts and a calibration factor and attaches p2;
* the Combiner averages the probabilities with its weights, counts the customer's payments and
  flags a ``schema-mismatch`` when it gets a tuple of the other model version (Fries Fig. 2).

The model swap (Table 1) replaces FD2 (now p2 and p3 from the last 10 amounts) and the
Combiner's weights; FD2's state transformation pads the history to 10 amounts and
*recalibrates* (factor x 0.9): applied twice, or not at all, the scores change.

Run it: ``streamproof conformance --job examples/fraud_job.py:job --cases 60``.
"""

from __future__ import annotations

import math
from typing import Any

from spark_impl.reconfig import GeneratedSource, Job, Request, UserOperator, user_job, user_update
from spark_impl.workloads.fraud import fraud_flow

CUSTOMERS = 12
MERCHANTS = 5


def payment(index: int) -> tuple[str, Any]:
    """Payment ``index``: key = customer id, value = (customer, merchant, amount)."""
    customer = f"c{(index * 7919) % CUSTOMERS:02d}"
    merchant = f"m{(index * 104729 + 13) % MERCHANTS:02d}"
    amount = float((index * 2654435761) % 997) / 10.0 + (250.0 if index % 29 == 0 else 0.0)
    return customer, (customer, merchant, amount)


def score(history: list[float], amount: float, calibration: float = 1.0) -> float:
    """A logistic of the amount's z-score against the history."""
    if not history:
        return 0.5
    mean = sum(history) / len(history)
    spread = max(math.sqrt(sum((h - mean) ** 2 for h in history) / len(history)), 1.0)
    z = max(-30.0, min(30.0, calibration * (amount - mean) / spread))
    return round(1.0 / (1.0 + math.exp(-z)), 6)


def fd1(state: Any, key: str, value: Any) -> tuple[Any, list[tuple[str, Any]]]:
    """Customer model: p1 from the last 5 amounts and the weighted mean; re-key by merchant."""
    customer, merchant, amount = value
    recent, ewma = (state or ([], amount))
    p1 = round((score(recent, amount) + (0.6 if amount > 2 * ewma else 0.4)) / 2, 6)
    return ((recent + [amount])[-5:], round(0.7 * ewma + 0.3 * amount, 6)), \
        [(merchant, (customer, merchant, amount, (p1,)))]


def fd2_old(state: Any, key: str, value: Any) -> tuple[Any, list[tuple[str, Any]]]:
    """Merchant model v1: p2 from the last 5 amounts."""
    customer, merchant, amount, probs = value
    history, calibration = state or ([], 1.0)
    p2 = score(history, amount, calibration)
    return ((history + [amount])[-5:], calibration), [(customer, (customer, merchant, amount, probs + (p2,)))]


def fd2_new(state: Any, key: str, value: Any) -> tuple[Any, list[tuple[str, Any]]]:
    """Merchant model v2: p2 from the last 5 and p3 from the last 10 amounts."""
    customer, merchant, amount, probs = value
    history, calibration = state or ([], 1.0)
    extra = (score(history[-5:], amount, calibration), score(history, amount, calibration))
    return ((history + [amount])[-10:], calibration), [(customer, (customer, merchant, amount, probs + extra))]


def recalibrate(state: Any) -> Any:
    """FD2's state transformation: pad the history to 10 amounts, recalibrate by 0.9."""
    history, calibration = state
    padded = [history[0]] * (10 - len(history)) + history if history else history
    return padded, round(calibration * 0.9, 6)


def combiner(weights: tuple[float, ...]) -> Any:
    """The combiner with ``weights``: one alert per payment, in the customer's order."""

    def combine(state: Any, key: str, value: Any) -> tuple[Any, list[tuple[str, Any]]]:
        customer, merchant, amount, probs = value
        seen = (state or 0) + 1
        if len(probs) != len(weights):
            return seen, [(key, ("schema-mismatch", seen, len(probs), len(weights)))]
        total = round(sum(w * p for w, p in zip(weights, probs)), 4)
        return seen, [(key, ("fraud" if total > 0.8 else "ok", seen, total, merchant))]

    return combine


def keep(state: Any) -> Any:
    """The combiner keeps its state."""
    return state


def job() -> tuple[Job, list[Request], dict[str, Any]]:
    """The pipeline over 300 generated payments, the model swap, and the output dependence."""
    flow = fraud_flow()
    operators = {"FD1": UserOperator(flow.kind("FD1"), fd1),
                 "FD2": UserOperator(flow.kind("FD2"), fd2_old),
                 "Combiner": UserOperator(flow.kind("Combiner"), combiner((0.4, 0.6)))}
    pipeline = user_job(flow, operators, GeneratedSource("payments", 300, payment),
                        parallelism={"FD1": 2, "FD2": 2, "Combiner": 2})
    swap = Request({"FD2": user_update(flow, "FD2", fd2_new, recalibrate),
                    "Combiner": user_update(flow, "Combiner", combiner((0.4, 0.4, 0.2)), keep)})
    # the alerts of one customer must come out in the order the serial execution emits them
    return pipeline, [swap], {"dependence": "key"}
