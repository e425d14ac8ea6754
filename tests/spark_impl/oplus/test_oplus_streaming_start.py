"""Starting a live O+ query (:func:`spark_impl.oplus.streaming.start_oplus_query`) on a
stand-in stream (:class:`conformance.standin.streaming.Stream`, no Spark): what it refuses, what
it hands to Structured Streaming, and its defaults.

* ``keep: int = 2``, "``keep``: commit records retained (>= 1)" (docs/spark.md: after a run
  "the last two commit records").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.streaming_log import Commit

from conformance.standin.streaming import Stream


def _started(root: Path, **options: Any) -> tuple[Any, Stream]:
    stream = Stream()
    run = start_oplus_query(None, stream, [oplus_job("forward", 1, 1)], checkpoint_dir=str(root),
                            sink=None, **options)  # type: ignore[arg-type]  # no batch is run: no sink reached
    return run, stream


def test_a_query_started_without_keep_retains_the_last_two_commit_records(tmp_path: Path) -> None:
    run, stream = _started(tmp_path)
    for batch in range(5):
        run.log.write_commit(Commit(batch, {0: 1}, {0: 1}, 1, watermark={0: float(batch)}))
        run.log.mark_delivered(batch)
    stream.handler(None, 4)  # a committed, delivered batch again: replayed, then the checkpoint pruned
    assert run.replayed == [4] and run.log.committed() == [3, 4]
