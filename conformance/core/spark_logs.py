"""Spark's and py4j's log lines while the suite runs its own engines: kept off the suite user's
stderr, and the user's session left as it was.

The suite injects failures on purpose: it crashes drivers between a batch's tasks and its
commit, stops queries, makes tasks fail. Spark logs every one of them as an ERROR with its
whole JVM and Python traceback (``ERROR MicroBatchExecution: Query ... terminated with error``,
``ERROR Executor: Exception in task``, ``TaskSetManager ... failed``): about 80 lines per
simulated crash, hundreds in a passing run, all describing what the suite did on purpose.

:func:`spark_logs_quiet` sets, for the duration of a block, the level of

* the JVM's log4j root logger (every Spark logger without a level of its own) of the session
  the suite uses - the one given (a user's), the active one, or the one the suite creates
  during the block (its session getters call :func:`adopt`) - through log4j's ``Configurator``,
  not ``SparkContext.setLogLevel``, so that Spark's shell threshold (what a session that never
  called ``setLogLevel`` shows on the console) is untouched;
* the Python loggers ``py4j`` and ``pyspark``;

and puts every level back on the way out (also when the block raises), so a user's session
logs afterwards exactly as before. The level is ``level`` if given, else
``$STREAMPROOF_SPARK_LOG_LEVEL``, else ``OFF`` (:data:`QUIET`); one of log4j's names
(:data:`LEVELS`, any case). The product's own ``streamproof.*`` loggers are not touched here
(:mod:`conformance.core.product_logs`); nor are the user's.

What a user loses with Spark quiet: nothing the suite needs Spark's lines to say. A real
infrastructure failure (the JVM dies, the py4j connection breaks) reaches the suite as an
exception, which the command line prints as its own one error line (exit 3); ``--spark-log-level
WARN`` (or the environment variable) shows Spark's own lines again for a closer look.

Not covered: Spark's JVM start-up lines (``Using Spark's default log4j profile``, ``Setting
default log level``, the ``NativeCodeLoader`` warning, the JVM's own ``WARNING: Using incubator
modules``), printed before a session exists; and what is printed without a logger when the
JVM is lost (py4j's ``Exception while sending command`` on the root logger, the accumulator
server's traceback), which is the news then.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

from spec.errors import InputError, cut

__all__ = ["ENV", "LEVELS", "QUIET", "adopt", "python_level", "resolve_level", "spark_logs_quiet"]

ENV = "STREAMPROOF_SPARK_LOG_LEVEL"
"""The environment variable giving the level when none is passed."""

QUIET = "OFF"
"""The default level: nothing Spark logs while the suite runs reaches stderr."""

LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")
"""log4j's level names, quietest first."""

PYTHON_LOGGERS = ("py4j", "pyspark")
"""Spark's Python-side loggers."""

_PYTHON_LEVEL = {"OFF": logging.CRITICAL + 1, "FATAL": logging.CRITICAL, "ERROR": logging.ERROR,
                 "WARN": logging.WARNING, "INFO": logging.INFO, "DEBUG": logging.DEBUG, "TRACE": logging.DEBUG,
                 "ALL": logging.DEBUG}


def resolve_level(level: str | None = None, where: str = "--spark-log-level") -> str:
    """``level``, else ``$STREAMPROOF_SPARK_LOG_LEVEL``, else :data:`QUIET`, as an upper-case
    name of :data:`LEVELS`; InputError naming ``where`` (or the variable) for any other text."""
    if level is None:
        level, where = os.environ.get(ENV) or QUIET, ENV if os.environ.get(ENV) else where
    name = level.strip().upper()
    if name not in LEVELS:
        raise InputError(f"expected one of {', '.join(LEVELS)} (any case), got {cut(level, 40)!r}", where)
    return name


def python_level(name: str) -> int:
    """The ``logging`` level matching log4j's ``name`` (``OFF``: above CRITICAL)."""
    return _PYTHON_LEVEL[name]


@dataclass
class _Block:
    """The active quiet block: its level and, per JVM it set, the root level it replaced."""

    level: str
    saved: list[tuple[Any, str]] = field(default_factory=list)


_ACTIVE: list[_Block] = []
_LOCK = threading.Lock()


def _jvm_of(spark: Any) -> Any:
    """The py4j JVM view of ``spark``'s context, or None (a stand-in session, a stopped one)."""
    context = getattr(spark, "sparkContext", None)
    return getattr(context, "_jvm", None)


def _root_level(jvm: Any) -> str:
    return str(jvm.org.apache.logging.log4j.LogManager.getRootLogger().getLevel().toString())


def _set_root(jvm: Any, name: str) -> None:
    log4j = jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setRootLevel(log4j.Level.toLevel(name))


def adopt(spark: Any) -> Any:
    """Within a :func:`spark_logs_quiet` block, give ``spark``'s JVM the block's level (the
    level it had first is put back when the block ends); outside one, nothing. Returns
    ``spark``, so a session getter can end with ``return adopt(session)``.

    Every call checks the level again: ``spark_impl.session.get_or_create_session`` called
    from a thread with no active session (the suite's watchdog threads) gets the running
    session from ``getOrCreate`` and sets its level to ERROR, and Spark would then print the
    suite's injected crashes again."""
    jvm = _jvm_of(spark) if _ACTIVE else None
    if jvm is None:
        return spark
    with _LOCK:  # engines call their getters from several threads at once
        if not _ACTIVE:
            return spark
        block = _ACTIVE[0]
        known = id(jvm) in {id(seen) for seen, _ in block.saved}  # the list keeps each JVM view alive
        try:
            current = _root_level(jvm)
            if current != block.level:
                _set_root(jvm, block.level)
        except Exception:  # noqa: BLE001 - a stopped or dead JVM: nothing to quiet (its own call fails loudly)
            return spark
        if not known:
            block.saved.append((jvm, current))
    return spark


@contextmanager
def spark_logs_quiet(level: str | None = None, spark: Any = None) -> Iterator[str]:
    """Within the block, Spark's JVM and Python loggers log at ``level`` (module docstring;
    :func:`resolve_level`); ``spark``, else the active session if any, is adopted at once, a
    session the suite creates later when its getter calls :func:`adopt`. Yields the level.
    Nested blocks leave the outermost one in charge."""
    name = resolve_level(level)
    if _ACTIVE:
        yield _ACTIVE[0].level
        return
    loggers = [logging.getLogger(n) for n in PYTHON_LOGGERS]
    saved = [(logger, logger.level) for logger in loggers]
    block = _Block(name)
    _ACTIVE.append(block)
    try:
        for logger in loggers:
            logger.setLevel(python_level(name))
        adopt(spark if spark is not None else _active_session())
        yield name
    finally:
        with _LOCK:
            _ACTIVE.remove(block)
        for logger, old in saved:
            logger.setLevel(old)
        for jvm, old_level in block.saved:
            _restore(jvm, old_level)


def _active_session() -> Any:
    """The active SparkSession if one runs, else None (pyspark not loaded yet: none runs, and
    the block does not load it)."""
    if "pyspark.sql" not in sys.modules:
        return None
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def _restore(jvm: Any, name: str) -> None:
    """Put the JVM's root level back; a JVM that died meanwhile has nothing left to restore
    (the failure itself is what the block's caller reports)."""
    try:
        _set_root(jvm, name)
    except Exception:  # noqa: BLE001 - py4j raises its own errors on a dead gateway
        pass
