"""The Fries Structured Streaming front end (``spark_impl.reconfig.streaming.start_query``) driven
without Spark: the real ``foreachBatch`` handler is called directly, batch by batch, as
Structured Streaming would, with a stand-in streaming DataFrame
(:mod:`conformance.standin.streaming`) on :class:`conformance.standin.spark.LocalSpark`.

:class:`Hold` is a ``StepHook`` owning the request's FCM clock (its control messages held or
delivered at once); :class:`Front` a job, its rows and ``start_query`` on one checkpoint.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from spec.fries.scenario import scenario_from_json
from support.fries_chains import chain_json

from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import MicroBatch, Stream
from spark_impl.reconfig.api import scenario_job
from spark_impl.reconfig.streaming import start_query


class Hold:
    """A ``StepHook`` that holds the active request's control messages while ``holding``
    (they become visible an hour after the step) and delivers them at once otherwise."""

    def __init__(self) -> None:
        self.holding = False

    def before(self, executor: Any) -> None:
        a = executor.state[0].live.active
        if a is not None:
            a.issued = time.time() + (3600.0 if self.holding else -1.0)
            executor._publish()  # the hook owns the FCM clock, as the stepped engine does

    def after(self, executor: Any, token: Any) -> None:
        pass


class Front:
    """A chain job (its request taken out, to be submitted), its rows, and ``start_query`` on
    one checkpoint with the stand-in stream; :meth:`batch` is one Structured Streaming batch."""

    def __init__(self, directory: str, tuples: int, at: int) -> None:
        scenario = scenario_from_json(chain_json(2, tuples, at=at), "streaming-front-end")
        full = scenario_job(scenario)
        self.request = full.planned[0].request
        self.job = replace(full, planned=())
        self.rows = [(t.key, t.value) for t in scenario.sources["S"]]
        self.spark = LocalSpark()
        self.directory = directory
        self.stream = Stream(columns=("key", "value"))
        self.run: Any = None

    def start(self, hook: Any = None, **options: Any) -> Any:
        """``start_query`` on the checkpoint (a restart when called again)."""
        self.stream = Stream(columns=("key", "value"))
        self.run = start_query(self.spark, self.job, self.stream, scheduler="fries", checkpoint_dir=self.directory,
                               step_hook=hook, **options)
        return self.run

    def batch(self, batch_id: int, first: int, count: int) -> None:
        """Structured Streaming batch ``batch_id``: rows ``first`` .. ``first + count - 1``."""
        self.stream.handler(MicroBatch(self.spark, self.rows[first:first + count]), batch_id)
