"""A ``CallbackSink`` function for the sink tests: it collects each delivery (Spark's first
action on it) and keeps the rows of every call that completed, so a test sees exactly what a
sink received; ``wrap=True`` hands the error of the collect on inside a multi-line text, as
Spark's ``PythonException`` wraps a task's error on its way to the driver."""

from __future__ import annotations

import traceback
from typing import Any


class Kept:
    """``function(df, batch_id)``: ``calls`` maps each completed call's batch id to its rows."""

    def __init__(self, wrap: bool = False) -> None:
        self.calls: dict[int, list[Any]] = {}
        self.wrap = wrap

    def __call__(self, df: Any, batch_id: int) -> None:
        try:
            rows = df.collect()
        except Exception:
            if not self.wrap:
                raise
            raise RuntimeError("An exception was thrown from the Python worker:\n" + traceback.format_exc()) from None
        self.calls[batch_id] = [tuple(r) for r in rows]
