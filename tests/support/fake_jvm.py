"""A stand-in for a SparkSession's py4j JVM view that answers the two log4j calls
``conformance.core.spark_logs`` makes (read the root level, set it), keeping the level here."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any


class FakeJvm:
    """``org.apache.logging.log4j`` with a root level (``level``) and every level set (``sets``);
    reading the level takes ``pause`` seconds and answers the level at the end (a slow gateway)."""

    def __init__(self, level: str, pause: float = 0.0) -> None:
        self.level = level
        self.pause = pause
        self.sets: list[str] = []
        root = SimpleNamespace(getLevel=lambda: SimpleNamespace(toString=self._read))
        log4j = SimpleNamespace(
            LogManager=SimpleNamespace(getRootLogger=lambda: root),
            Level=SimpleNamespace(toLevel=lambda name: name),
            core=SimpleNamespace(config=SimpleNamespace(Configurator=SimpleNamespace(setRootLevel=self._set))))
        self.org = SimpleNamespace(apache=SimpleNamespace(logging=SimpleNamespace(log4j=log4j)))

    def _set(self, name: str) -> None:
        self.level = name
        self.sets.append(name)

    def _read(self) -> str:
        time.sleep(self.pause)
        return self.level


def session_of(jvm: FakeJvm) -> Any:
    """A session object whose context has ``jvm`` as its JVM view."""
    return SimpleNamespace(sparkContext=SimpleNamespace(_jvm=jvm))
