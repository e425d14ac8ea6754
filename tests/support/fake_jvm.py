"""A stand-in for a SparkSession's py4j JVM view that answers the two log4j calls
``conformance.core.spark_logs`` makes (read the root level, set it), keeping the level here."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


class FakeJvm:
    """``org.apache.logging.log4j`` with a root level (``level``) and every level set (``sets``)."""

    def __init__(self, level: str) -> None:
        self.level = level
        self.sets: list[str] = []
        root = SimpleNamespace(getLevel=lambda: SimpleNamespace(toString=lambda: self.level))
        log4j = SimpleNamespace(
            LogManager=SimpleNamespace(getRootLogger=lambda: root),
            Level=SimpleNamespace(toLevel=lambda name: name),
            core=SimpleNamespace(config=SimpleNamespace(Configurator=SimpleNamespace(setRootLevel=self._set))))
        self.org = SimpleNamespace(apache=SimpleNamespace(logging=SimpleNamespace(log4j=log4j)))

    def _set(self, name: str) -> None:
        self.level = name
        self.sets.append(name)


def session_of(jvm: FakeJvm) -> Any:
    """A session object whose context has ``jvm`` as its JVM view."""
    return SimpleNamespace(sparkContext=SimpleNamespace(_jvm=jvm))
