"""Keys of mixed types where the executor orders keys: request validation, the
trace's states and a blocking operator's flush all iterate keys of any supported type in
:func:`spark_impl.keys.key_order`, never a plain ``sorted`` (a ``TypeError`` on a string next to
a number or ``None``). Request validation on mixed keys: ``test_fries_model_promises.py``."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from spark_impl.keys import key_order
from spark_impl.reconfig.trace import write_trace

MIXED: list[Any] = ["a", None, ("a", 1), (1, "a"), 2.5, b"k", 7, True]


def test_key_order_is_a_total_order_on_mixed_keys() -> None:
    ordered = sorted(MIXED, key=key_order)
    assert sorted(reversed(MIXED), key=key_order) == ordered
    numbers = [k for k in ordered if isinstance(k, (int, float))]
    assert ordered[:len(numbers)] == numbers == sorted(numbers)


def test_the_trace_writes_states_of_mixed_keys(tmp_path: Path) -> None:
    """Failed before the fix: ``write_trace`` sorted the states' keys as they are."""
    result = SimpleNamespace(schedule=SimpleNamespace(to_json=lambda: {}), outputs=[], delays_ms=(), rejected=(),
                             states={("O1", k): i for i, k in enumerate(MIXED) if not isinstance(k, bytes)})
    paths = write_trace(result, str(tmp_path))
    states = json.loads(Path(paths["states"]).read_text())["states"]
    assert len(states) == len(MIXED) - 1
