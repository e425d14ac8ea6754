"""Starting a live O+ query (:func:`spark_impl.oplus.streaming.start_oplus_query`) on a
stand-in stream (:class:`conformance.standin.streaming.Stream`, no Spark): what it refuses, what
it hands to Structured Streaming, and its defaults.

* refused with InputError (the docstring's requirements): a source that is not streaming or
  has no ``ts``, no jobs or a job not built by ``oplus_job``, ``keep < 1``, an unknown fault, a
  URI ``checkpoint_dir`` without ``query_checkpoint``, a checkpoint of the older layout
  (``commits/*.json``, ``requests.json``, ``delivered.json``: ``Log.check_layout``) and a
  checkpoint of a query with another number of jobs;
* a good start hands Structured Streaming ``checkpointLocation`` (``<checkpoint_dir>/query``,
  absolute, by default), the trigger only when given, and a ``foreachBatch`` handler, and keeps
  the query it started; the options after ``jobs`` are keyword-only;
* ``keep: int = 2``, "``keep``: commit records retained (>= 1)" (docs/spark.md: after a run
  "the last two commit records").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest

from spec.errors import InputError

from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.streaming_log import Commit, Log

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


def _jobs() -> list[Any]:
    return [oplus_job("sliding-sum", 2, 4, parallelism=2), oplus_job("scalejoin", 1, 3, params={"keys": 2})]


def _old_layout(root: Path, name: str) -> str:
    path = root / "old" / "oplus" / name
    path.parent.mkdir(parents=True)
    path.write_text("{}", encoding="utf-8")
    return str(root / "old")


def _other_query(root: Path) -> str:
    Log(str(root / "other")).write_commit(Commit(0, {0: 1}, {0: 1}, 1))
    return str(root / "other")


BAD_STARTS: list[tuple[str, Callable[[Path], dict[str, Any]], str | None]] = [
    ("a source that is not streaming", lambda root: {"stream": Stream(False)}, "stream"),
    ("a source without ts", lambda root: {"stream": Stream(columns=("key", "value"))}, "stream"),
    ("no jobs", lambda root: {"jobs": []}, "jobs"),
    ("a job not built by oplus_job", lambda root: {"jobs": [*_jobs(), {"operator": "forward"}]}, "jobs"),
    ("keep 0", lambda root: {"keep": 0}, "keep"),
    ("an unknown fault", lambda root: {"faults": ["window-off-by-two"]}, None),
    ("a URI checkpoint without query_checkpoint", lambda root: {"checkpoint_dir": "s3://nowhere/ckpt"},
     "query_checkpoint"),
    *[(f"a checkpoint of the older layout ({name})", lambda root, name=name: {"checkpoint_dir": _old_layout(root, name)},
       "checkpoint_dir") for name in ("commits/00000000000000000001.json", "requests.json", "delivered.json")],
    ("a checkpoint of a query of another number of jobs", lambda root: {"checkpoint_dir": _other_query(root)},
     "checkpoint_dir"),
]


@pytest.mark.parametrize("what, arguments, where", BAD_STARTS, ids=[b[0] for b in BAD_STARTS])
def test_a_bad_start_is_refused_where_it_is_wrong(tmp_path: Path, what: str,
                                                  arguments: Callable[[Path], dict[str, Any]], where: str | None) -> None:
    given = {"stream": Stream(), "jobs": _jobs(), "checkpoint_dir": str(tmp_path / "new"), **arguments(tmp_path)}
    stream, jobs = given.pop("stream"), given.pop("jobs")
    with pytest.raises(InputError) as refused:
        start_oplus_query(None, stream, jobs, sink=None, **given)  # type: ignore[arg-type]
    assert where is None or (refused.value.where or "").startswith(where)
    assert stream.writeStream.query.isActive and stream.handler is None  # nothing started


@pytest.mark.parametrize("trigger", [None, {"processingTime": "1 second"}])
def test_a_good_start_configures_the_writer_and_keeps_its_query(tmp_path: Path, trigger: Any) -> None:
    stream = Stream()
    run = start_oplus_query(None, stream, [oplus_job("forward", 1, 1)], checkpoint_dir=str(tmp_path / "good"),
                            sink=None, trigger=trigger, keep=1)  # type: ignore[arg-type]  # keep 1: the smallest
    writer = stream.writeStream
    assert writer.options == {"checkpointLocation": os.path.join(os.path.abspath(tmp_path / "good"), "query")}
    assert writer.trigger_args == trigger and callable(writer.handler) and run.query is writer.query


def test_the_options_after_the_jobs_are_keyword_only(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        start_oplus_query(None, Stream(), _jobs(), str(tmp_path))  # type: ignore[call-arg]
