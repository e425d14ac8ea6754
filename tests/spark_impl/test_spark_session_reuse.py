"""``spark_impl.session.get_or_create_session`` returns a session that already exists
untouched (its docstring): a driver's thread - a ``foreachBatch`` callback, a supervisor, the
suite's worker threads - has no *active* session of its own, yet must get the process's
session as the user configured it, not one with streamproof's laptop settings and log level
applied again."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from spark_impl.session import get_or_create_session


def _root_level(spark: Any) -> str:
    return str(spark.sparkContext._jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel().toString())


@pytest.mark.spark
def test_a_thread_without_an_active_session_gets_the_existing_one_untouched(spark: Any) -> None:
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    level = _root_level(spark)
    got: list[Any] = []
    try:
        spark.conf.set("spark.sql.shuffle.partitions", "7")
        spark.sparkContext.setLogLevel("WARN")
        thread = threading.Thread(target=lambda: got.append(get_or_create_session()))
        thread.start()
        thread.join(60)
        assert got and got[0] is spark
        assert spark.conf.get("spark.sql.shuffle.partitions") == "7"
        assert _root_level(spark) == "WARN"
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
        spark.sparkContext.setLogLevel(level)
