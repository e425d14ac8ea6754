"""The streamproof pytest plugin (entry point ``pytest11``: installing streamproof enables it).

Fixtures for a user's CI test of their own job::

    def test_my_pipeline_stays_consistent(streamproof_oracle):
        streamproof_oracle.check("jobs/pipeline.py:job", cases=20)

* ``streamproof_spark`` (session scope): one local SparkSession for the whole test session -
  the active one if the user already has one (then left running), else created and stopped
  at the end;
* ``streamproof_oracle``: an :class:`Oracle` on that session: :meth:`Oracle.check` runs the
  randomized user-job suite (:func:`conformance.userjob.assertions.assert_job_conforms`),
  :meth:`Oracle.judge` judges a single run the test made itself.

Nothing heavy is imported until a fixture is used: the plugin costs nothing in test sessions
that do not use it.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import pytest
from conformance.testing.helper import assert_conforms
from conformance.userjob.assertions import assert_job_conforms
from spark_impl.session import get_or_create_session


class Oracle:
    """The reference as an oracle, bound to a SparkSession."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark

    def check(self, job: Any, requests: Sequence[Any] | None = None, **options: Any) -> Any:
        """Run the suite on ``job`` (``"FILE.py:NAME"``, a callable returning ``(job, requests[,
        options])``, or a Job with its requests); AssertionError with the shrunk case unless
        every case conforms. Options: ``cases`` (20), ``seed``, ``faults``, ``scheduler``,
        ``save_dir``, ``options``, ``spark_log_level`` (Spark's log level while the suite runs,
        default OFF; the session's own level is put back after)."""
        return assert_job_conforms(job, requests, spark=self.spark, **options)

    def judge(self, job: Any, outputs: Any, **run: Any) -> None:
        """Judge one run of ``job`` (:func:`conformance.testing.helper.assert_conforms`)."""
        assert_conforms(job, outputs, **run)


@pytest.fixture(scope="session")
def streamproof_spark() -> Iterator[Any]:
    """One SparkSession for the test session (module docstring)."""
    from pyspark.sql import SparkSession

    existing = SparkSession.getActiveSession()
    session = existing or get_or_create_session(app_name="streamproof-pytest")
    yield session
    if existing is None:
        session.stop()


@pytest.fixture
def streamproof_oracle(streamproof_spark: Any) -> Oracle:
    """The oracle on the shared session."""
    return Oracle(streamproof_spark)
