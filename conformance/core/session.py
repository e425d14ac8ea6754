"""The one SparkSession of a conformance run, created on first use.

Every suite and engine that reaches Spark gets its session through :func:`shared_session`, so
a run starts Spark at most once and a suite that never reaches Spark never starts it. Every
session a getter hands out is adopted by the quiet-logs block the run may be in
(:func:`conformance.core.spark_logs.adopt`): Spark's log lines about the suite's injected
failures stay off stderr, whoever created the session.
"""

from __future__ import annotations

from typing import Any, Callable

import spark_impl.session as spark_session

from conformance.core.spark_logs import adopt

APP_NAME = "streamproof-conformance"


def shared_session(spark: Any = None) -> Callable[[], Any]:
    """A getter of ``spark``, or of the shared conformance SparkSession created on first use
    (so a suite that never reaches Spark never starts it)."""
    holder: dict[str, Any] = {"spark": spark}

    def session() -> Any:
        if holder["spark"] is None:
            holder["spark"] = conformance_session(APP_NAME)
        return adopt(holder["spark"])
    return session


def conformance_session(app_name: str = APP_NAME) -> Any:
    """The active SparkSession or a new one (``spark_impl.session.get_or_create_session``),
    adopted by the quiet-logs block the run is in (module docstring)."""
    return adopt(spark_session.get_or_create_session(app_name=app_name))
