"""Shared pytest configuration.

One SparkSession for the whole test session (starting one costs 6-10 s): tests that need
Spark take the ``spark`` fixture, which builds it on first use through
``spark_impl.session.get_or_create_session`` and stops it at the end.
Hypothesis profiles: ``default`` (fast, for every run) and ``ci`` (derandomized so CI is
reproducible); select one with ``HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, settings

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
    from spark_impl.session import get_or_create_session

    session = get_or_create_session(app_name="streamproof-tests")
    yield session
    session.stop()
