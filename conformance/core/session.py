"""The one SparkSession of a conformance run, created on first use.

Every suite and engine that reaches Spark gets its session through :func:`shared_session`, so
a run starts Spark at most once and a suite that never reaches Spark never starts it.
"""

from __future__ import annotations

from typing import Any, Callable

import spark_impl.session as spark_session

APP_NAME = "streamproof-conformance"


def shared_session(spark: Any = None) -> Callable[[], Any]:
    """A getter of ``spark``, or of the shared conformance SparkSession created on first use
    (so a suite that never reaches Spark never starts it)."""
    holder: dict[str, Any] = {"spark": spark}

    def session() -> Any:
        if holder["spark"] is None:
            holder["spark"] = spark_session.get_or_create_session(app_name=APP_NAME)
        return holder["spark"]
    return session
