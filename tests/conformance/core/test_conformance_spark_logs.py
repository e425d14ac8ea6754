"""Spark's and py4j's loggers are quiet while the suite runs and go back to their levels after
(conformance/core/spark_logs.py; docs/conformance.md after the ``--json`` example): the session
the suite is given (a user's), the active one, or one a suite getter hands out inside the
block; the product's own ``streamproof.*`` loggers are not touched."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest

from spec.errors import InputError

from conformance.core.session import shared_session
from conformance.core.spark_logs import ENV, PYTHON_LOGGERS, adopt, resolve_level, spark_logs_quiet
from support.fake_jvm import FakeJvm, session_of


def test_a_session_a_suite_getter_hands_out_inside_the_block_is_quiet_until_the_block_ends() -> None:
    jvm = FakeJvm("INFO")
    getter = shared_session(session_of(jvm))
    getter()
    assert jvm.sets == []  # outside a block nothing changes
    with spark_logs_quiet("off"):
        getter()
        getter()
        assert jvm.level == "OFF" and jvm.sets == ["OFF"]  # set once while it holds
        jvm.level = "ERROR"  # get_or_create_session from a thread with no active session
        getter()
        assert jvm.level == "OFF"
    assert jvm.level == "INFO"  # the level the session had first


def test_getters_called_from_several_threads_at_once_put_back_the_level_the_session_had_first() -> None:
    """The second getter starts while the first is reading the level and reads it after the
    first set it: without the lock it would record OFF as the level to put back."""
    jvm = FakeJvm("WARN", pause=0.2)
    getter = shared_session(session_of(jvm))
    with spark_logs_quiet():
        threads = [threading.Thread(target=getter) for _ in range(2)]
        threads[0].start()
        time.sleep(0.1)
        threads[1].start()
        for thread in threads:
            thread.join()
        assert jvm.level == "OFF"
    assert jvm.level == "WARN"


def test_the_given_sessions_level_comes_back_also_when_the_block_raises_and_nested_blocks_keep_the_outer() -> None:
    jvm = FakeJvm("WARN")
    with pytest.raises(KeyError):
        with spark_logs_quiet("ERROR", session_of(jvm)) as level:
            assert level == "ERROR" and jvm.level == "ERROR"
            with spark_logs_quiet("DEBUG") as inner:
                assert inner == "ERROR" and adopt(session_of(jvm)) is not None and jvm.level == "ERROR"
            raise KeyError("the suite failed")
    assert jvm.level == "WARN"


def test_the_python_loggers_of_spark_are_quiet_inside_and_restored_and_the_products_untouched() -> None:
    own = logging.getLogger("py4j")
    before = [logging.getLogger(n).level for n in PYTHON_LOGGERS]
    product = logging.getLogger("streamproof").level
    own.setLevel(logging.INFO)
    try:
        with spark_logs_quiet():
            assert not any(logging.getLogger(n).isEnabledFor(logging.CRITICAL) for n in PYTHON_LOGGERS)
            assert logging.getLogger("streamproof").level == product
        assert own.level == logging.INFO and logging.getLogger("pyspark").level == before[1]
    finally:
        own.setLevel(before[0])


def test_the_level_comes_from_the_argument_else_the_environment_else_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert resolve_level() == "OFF" and resolve_level("warn") == "WARN"
    monkeypatch.setenv(ENV, "info")
    assert resolve_level() == "INFO" and resolve_level("error") == "ERROR"
    monkeypatch.setenv(ENV, "chatty")
    with pytest.raises(InputError, match=ENV):
        resolve_level()
    with pytest.raises(InputError, match="--spark-log-level"):
        resolve_level("loud")


def test_a_users_running_session_is_off_during_the_block_and_at_its_own_level_after(spark: Any) -> None:
    """On the real JVM: log4j's root level, read back through py4j."""
    jvm = spark.sparkContext._jvm
    root = jvm.org.apache.logging.log4j.LogManager.getRootLogger()
    before = str(root.getLevel().toString())
    jvm.org.apache.logging.log4j.core.config.Configurator.setRootLevel(jvm.org.apache.logging.log4j.Level.WARN)
    try:
        with spark_logs_quiet(None, spark):
            assert str(root.getLevel().toString()) == "OFF"
        assert str(root.getLevel().toString()) == "WARN"
    finally:
        jvm.org.apache.logging.log4j.core.config.Configurator.setRootLevel(
            jvm.org.apache.logging.log4j.Level.toLevel(before))
