"""The sliding-sum aggregate A(WA, WS, 1, f_SK = key, WT, ...): per key and window instance,
the sum of the values. Input payload: ``(key, value)``."""

from __future__ import annotations

import operator

from spec.oplus.model import OPlus, StreamTuple, WindowType
from spec.oplus.windows import WindowSpec
from reference.oplus.operators.aggregates import incremental_aggregate


def sliding_sum(windows: WindowSpec, window_type: WindowType) -> OPlus:
    """Sliding-sum as an A (a single key per tuple)."""
    def keys(t: StreamTuple) -> frozenset[str]:
        return frozenset({t.payload[0]})

    return incremental_aggregate("sliding-sum", windows, keys,
                                 lambda key, t: t.payload[1], operator.add, window_type)
