"""Shared pytest configuration.

One SparkSession for the whole test session (starting one costs 6-10 s): tests that need
Spark take the ``spark`` fixture, which builds it on first use through
``spark_impl.session.get_or_create_session`` and stops it at the end.
Hypothesis profiles: ``default`` (fast, for every run) and ``ci`` (derandomized so CI is
reproducible); select one with ``HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, settings

#: fixtures shared by several test folders, registered once: the moto S3 server (``endpoint``)
#: and the three checkpoint locations local / file:// / s3:// (``location``)
pytest_plugins = ["support.s3_fixtures"]
from spark_impl.session import get_or_create_session

settings.register_profile(
    "default", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default"))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one SparkSession shared by every test of this pytest session."""
    session = get_or_create_session(app_name="streamproof-tests")
    yield session
    session.stop()


def _busy_threads(seconds: float = 1.0) -> list[str]:
    """The threads other than the main one that used more than a tenth of ``seconds`` of CPU
    while the main thread slept ``seconds`` (Linux ``/proc``; elsewhere none), each with its
    innermost frame."""
    def cpu(native_id: int | None) -> float:
        try:
            with open(f"/proc/self/task/{native_id}/stat", encoding="ascii") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    before = {t.ident: cpu(t.native_id) for t in others}
    time.sleep(seconds)
    frames = sys._current_frames()
    busy = []
    for t in others:
        used = cpu(t.native_id) - before[t.ident]
        frame = frames.get(t.ident or -1)
        if used > seconds / 10 and frame is not None:
            busy.append(f"{t.name} ({used:.2f} s of CPU in {seconds:g} s): {frame.f_code.co_filename}:"
                        f"{frame.f_lineno} ({frame.f_code.co_name})")
    return busy


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """No test may leave a thread spinning (an endless loop of a changed function, left running in a
    watchdog thread, held the GIL for the rest of the run: 30 min instead of 8, and a 4 s Z3
    proof ran past its 300 s budget). Checked once at the end: no thread may still be busy."""
    busy = _busy_threads()
    if busy:
        print("\nFAILED: a thread left by a test keeps running while the tests are over:\n  " + "\n  ".join(busy))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
