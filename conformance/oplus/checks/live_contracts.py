"""The O+ suite's checks of the live front end's and the batch API's contracts that need no
Spark.

The live O+ check (:mod:`conformance.oplus.engines.live`) feeds well-formed rows to a query that
always starts on good arguments, and the batch check always passes good scenarios; so the
refusals, the rows' defaults and the summary pass's bookkeeping are never exercised by them,
and a bug there changes no output of the suite's runs. This check calls them directly
(``python -c`` speed: no Spark, no query):

* **rescale** (:meth:`~spark_impl.oplus.streaming.OplusStreamingRun.rescale` on a run with a
  checkpoint in a temporary directory): a job index out of range, a parallelism outside
  ``1..MAX_PARALLELISM`` or not an ``int`` (a bool, a float, a string) and a watermark not an
  ``int`` or None are refused with InputError at ``job`` / ``parallelism`` / ``watermark`` and
  leave no request; accepted requests get increasing ids and are listed with their fields;
  an unknown crash point is refused, a known one fails the next batch once; ``status()`` is
  None before a commit, then the newest commit record; after ``stop()`` a batch is refused
  (``StreamStopped``) and the query is stopped;
* **start** (:func:`~spark_impl.oplus.streaming.start_oplus_query` on a stand-in stream): a
  source that is not streaming, without ``ts``, no jobs or a job not built by ``oplus_job``,
  ``keep < 1``, an unknown fault, a URI checkpoint without ``query_checkpoint``, a checkpoint
  of the older layout (``commits/*.json``, ``requests.json``, ``delivered.json``) and a
  checkpoint of another number of jobs are refused with InputError; a good start passes
  ``checkpointLocation`` (``<checkpoint_dir>/query``, absolute, by default) and the trigger (only
  when given) to the writer and keeps the query it started;
* **jobs** (:func:`~spark_impl.oplus.streaming_jobs.oplus_job`): fewer than one source, and a
  source count the operator does not take, are refused; the default source counts (2 for
  scalejoin and forward, 1 otherwise) and each source's required fields;
* **rows** (``entries_of``, ``summarize``, ``Summary.merge``, the module docstring of
  :mod:`spark_impl.oplus.streaming_jobs`): a row's ``job``, ``source`` and ``seq`` default to
  0, ``end`` to False, null fields are dropped, arrays become tuples; the summary of a batch
  holds per ``(job, source)`` the largest timestamp or explicit watermark (+inf after ``end``),
  counts the tuples and the *late* ones (below the job's previous watermark), and reports, not
  counts, a row of an unknown job or source, a row with no ``ts``, watermark or ``end``, and a
  tuple without its operator's fields; merged summaries add up, at most three problems kept;
* **checkpoint** (:class:`~spark_impl.oplus.streaming_log.Log`): ``commit(b)`` of an absent
  batch is a KeyError; a torn *newest* request (a driver killed mid-``rescale``) is not a
  request, a torn older one is refused; ``drop_requests`` never deletes the newest request;
* **batch API** (:func:`spark_impl.oplus.run_batch` before any Spark call): not a list of
  scenarios, a bad scenario (located ``scenarios[i]``), one ``items_per_round`` per scenario
  of the wrong length, fewer than one item per round and an unknown fault are refused.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from typing import Any, Callable, Sequence, cast

from spec.errors import InputError
from spec.oplus.budget import MAX_PARALLELISM
from spec.oplus.scenario import instance_of

from conformance.core.refusals import refused
from conformance.core.results import CheckResult, FailureReport, SuiteResult
from conformance.core.watchdog import bounded
from conformance.standin.streaming import Query, Stream

CHECK = "spark-streaming O+ front end and batch API contracts vs their definitions (no Spark)"


def _keyword_only(calls: Sequence[tuple[str, Callable[[], Any]]]) -> list[str]:
    """Calls passing a keyword-only argument by position must raise TypeError (before any work)."""
    found = []
    for what, call in calls:
        try:
            call()
            found.append(f"{what} (a keyword-only argument by position) was accepted")
        except TypeError:
            pass
        except Exception as error:  # noqa: BLE001 - anything else is a finding
            found.append(f"{what} (a keyword-only argument by position) raised {type(error).__name__}: {error}")
    return found


def _jobs() -> list[Any]:
    from spark_impl.oplus.streaming_jobs import oplus_job

    return [oplus_job("sliding-sum", 2, 4, parallelism=2), oplus_job("scalejoin", 1, 3, params={"keys": 2})]


def rescale_problems(root: str) -> list[str]:
    """The rescale, crash-point, status and stop contract (module docstring)."""
    from spark_impl.oplus.streaming import CRASH_POINTS, OplusStreamingRun, SimulatedCrash
    from spark_impl.oplus.streaming_log import Commit, Log
    from spark_impl.reconfig.streaming import StreamStopped

    run = OplusStreamingRun(Query(), _jobs(), Log(root))
    bad: list[tuple[str, Callable[[], Any], str | None]] = [
        ("a rescale of job 2 of 2", lambda: run.rescale(2, job=2), "job"),
        ("a rescale of job -1", lambda: run.rescale(2, job=-1), "job"),
        ("a rescale of job 4 of 2", lambda: run.rescale(2, job=4), "job"),
        ("a rescale to parallelism 0", lambda: run.rescale(0), "parallelism"),
        (f"a rescale to parallelism {MAX_PARALLELISM + 1}", lambda: run.rescale(MAX_PARALLELISM + 1), "parallelism"),
        ("a rescale to parallelism True", lambda: run.rescale(True), "parallelism"),
        ("a rescale to parallelism 2.0", lambda: run.rescale(2.0), "parallelism"),  # type: ignore[arg-type]
        ("a rescale at watermark True", lambda: run.rescale(2, watermark=True), "watermark"),
        ("a rescale at watermark 1.5", lambda: run.rescale(2, watermark=1.5), "watermark"),  # type: ignore[arg-type]
        ("a rescale at watermark '3'", lambda: run.rescale(2, watermark="3"), "watermark"),  # type: ignore[arg-type]
        ("an unknown crash point", lambda: run.crash_at("before-round"), None),
    ]
    found = [p for what, call, where in bad for p in [refused(call, where, what)] if p is not None]
    found += _keyword_only([("rescale(2, 1)", lambda: cast(Any, run.rescale)(2, 1))])
    if run.log.requests():
        found.append(f"refused rescales left the requests {run.log.requests()}")
    first = run.rescale(MAX_PARALLELISM, job=1)
    second = run.rescale(1, watermark=-5)  # job 0 by default
    listed = [(r["id"], r["job"], r["parallelism"], r["watermark"]) for r in run.log.requests()]
    if not first < second or listed != [(first, 1, MAX_PARALLELISM, None), (second, 0, 1, -5)]:
        found.append(f"two accepted rescales got ids {first}, {second} and are listed as {listed}")
    for point in CRASH_POINTS:
        run.crash_at(point.encode().decode())  # an equal string, not the module's object
        outcomes = []
        for at in (*[p for p in CRASH_POINTS if p != point], point, point):
            try:
                run._maybe_crash(at)
                outcomes.append(False)
            except SimulatedCrash:
                outcomes.append(True)
        if outcomes != [False] * (len(CRASH_POINTS) - 1) + [True, False]:
            found.append(f"crash_at({point!r}) failed the points {outcomes} (expected once, at {point!r})")
    if run.status() is not None:
        found.append("status() before any commit is not None")
    record = Commit(3, {0: 2, 1: 1}, {0: 2, 1: 4}, 2, watermark={0: 7.0, 1: -math.inf}, applied=[first])
    run.log.write_commit(record)
    status = run.status()
    if status is None or status.to_json() != record.to_json():
        found.append(f"status() after a commit is {status}, expected {record}")
    run._refuse_after_stop(4)
    run.stop()
    if not run.query.stopped:
        found.append("stop() did not stop the query")
    try:
        run._refuse_after_stop(4)
        found.append("a batch that starts after stop() was not refused")
    except StreamStopped:
        pass
    return found


def start_problems(root: str) -> list[str]:
    """The start contract (module docstring); ``root``: an empty directory."""
    from spark_impl.oplus.streaming import _Handler, start_oplus_query
    from spark_impl.oplus.streaming_jobs import oplus_job
    from spark_impl.oplus.streaming_log import Commit, Log

    jobs = _jobs()
    olds: list[tuple[str, str]] = []
    for name in ("commits/00000000000000000001.json", "requests.json", "delivered.json"):
        old = os.path.join(root, f"old-{len(olds)}")
        path = os.path.join(old, "oplus", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("{}")
        olds.append((name, old))
    other = os.path.join(root, "other")
    Log(other).write_commit(Commit(0, {0: 1}, {0: 1}, 1))

    def start(stream: Any = None, chosen: Sequence[Any] = jobs, **options: Any) -> Any:
        options.setdefault("checkpoint_dir", os.path.join(root, "new"))
        return start_oplus_query(None, stream or Stream(), chosen, sink=cast(Any, None), **options)

    attempts: list[tuple[str, Callable[[], Any], str | None]] = [
        ("a source that is not streaming", lambda: start(Stream(False)), "stream"),
        ("a source without ts", lambda: start(Stream(columns=("key", "value"))), "stream"),
        ("no jobs", lambda: start(chosen=()), "jobs"),
        ("a job not built by oplus_job", lambda: start(chosen=[*jobs, {"operator": "forward"}]), "jobs"),
        ("keep=0", lambda: start(keep=0), "keep"),
        ("an unknown fault", lambda: start(faults=["window-off-by-two"]), None),
        ("an s3:// checkpoint without query_checkpoint", lambda: start(checkpoint_dir="s3://nowhere/ckpt"),
         "query_checkpoint"),
        *[(f"a checkpoint of the older layout ({name})", lambda old=old: start(checkpoint_dir=old), "checkpoint_dir")
          for name, old in olds],
        ("a checkpoint of a query of 1 job", lambda: start(checkpoint_dir=other), "checkpoint_dir"),
    ]
    found = [p for what, call, where in attempts for p in [refused(call, where, f"starting with {what}")]
             if p is not None]
    found += _keyword_only([("start_oplus_query(spark, stream, jobs, checkpoint_dir)",
                             lambda: cast(Any, start_oplus_query)(None, Stream(), jobs, os.path.join(root, "new")))])
    for trigger in (None, {"processingTime": "1 second"}):
        stream = Stream()
        # keep=1, the smallest valid value ("commit records retained (>= 1)"): a bound
        # ``keep < 2`` refuses it, and keep=0 alone would not show that
        options = {"keep": 1} if trigger is None else {}
        try:
            run = start(stream, [oplus_job("forward", 1, 1)], trigger=trigger,
                        checkpoint_dir=os.path.join(root, "good"), **options)
        except InputError as error:
            found.append(f"a good start ({options or 'defaults'}, trigger {trigger}) was refused: {error}")
            continue
        writer = stream.writeStream
        expected = os.path.join(os.path.abspath(os.path.join(root, "good")), "query")
        if (run.query is not writer.query or writer.options != {"checkpointLocation": expected}
                or writer.trigger_args != trigger or not isinstance(writer.handler, _Handler)):
            found.append(f"a good start (trigger {trigger}) configured the writer with options {writer.options}, "
                         f"trigger {writer.trigger_args}, handler {writer.handler!r}, query kept: "
                         f"{run.query is writer.query}")
    return found


def job_problems() -> list[str]:
    """The jobs contract (module docstring)."""
    from spark_impl.oplus.streaming_jobs import oplus_job

    found = [p for what, call, where in (
        ("a job with 0 sources", lambda: oplus_job("sliding-sum", 1, 2, sources=0), "sources"),
        ("a job with -1 sources", lambda: oplus_job("wordcount", 1, 2, sources=-1), "sources"),
        ("a scalejoin with 3 sources", lambda: oplus_job("scalejoin", 1, 2, sources=3), None),
        ("an unknown operator", lambda: oplus_job("maxsum", 1, 2), None),
    ) for p in [refused(call, where, what)] if p is not None]
    found += _keyword_only([("oplus_job('forward', 1, 1, 'multi')", lambda: cast(Any, oplus_job)("forward", 1, 1, "multi"))])
    defaults = {name: oplus_job(name, 1, 1).sources for name in ("scalejoin", "forward", "sliding-sum", "wordcount")}
    if defaults != {"scalejoin": 2, "forward": 2, "sliding-sum": 1, "wordcount": 1}:
        found.append(f"the default source counts are {defaults}")
    join, total = oplus_job("scalejoin", 1, 2), oplus_job("sliding-sum", 1, 2, sources=3)
    fields = [join.required_fields(0), join.required_fields(1), total.required_fields(2)]
    if fields != [("x", "y"), ("a", "b"), ("key", "value")]:
        found.append(f"required fields (scalejoin source 0, 1; sliding-sum source 2) are {fields}")
    plain = oplus_job("sliding-sum", 1, 2)
    flags = (plain.parallelism, plain.config().typed_keys, plain.config().off_by_one, plain.config(True).off_by_one)
    if flags != (1, True, False, True):
        found.append(f"a job without options: (parallelism, typed_keys, off_by_one, off_by_one when asked) = {flags}")
    return found + _route_problems()


def _route_problems() -> list[str]:
    """``route_key``: a string key where every O+ engine sends it (crc32), anything else by
    ``spark_impl.keys.route`` (an integer ``k`` to ``k mod p``)."""
    from spark_impl.keys import route
    from spark_impl.oplus.streaming_jobs import route_key

    found = []
    for key in ("a", "#x", "word-17", 7, -3, 12.0, (1, "a"), True):
        for size in (1, 3, 5):
            want = instance_of(key, size) if isinstance(key, str) else route(key, size)
            if route_key(key, size) != want or (isinstance(key, int) and want != key % size):
                found.append(f"route_key({key!r}, {size}) = {route_key(key, size)}, expected {want}")
    return found


def row_problems() -> list[str]:
    """The rows and summary contract (module docstring)."""
    from pyspark.sql import Row  # a Row needs no SparkSession

    from spark_impl.oplus.streaming_jobs import Summary, entries_of, oplus_job, summarize

    found: list[str] = []
    columns = ["job", "source", "seq", "ts", "watermark", "end", "key", "value", "text"]
    entry = entries_of(columns)
    for key, want in (([1, [2, "a"]], (1, (2, "a"))), (Row(a=1, b=[2, 3]), (1, (2, 3)))):
        got = entry(Row(job=None, source=None, seq=None, ts=5, watermark=None, end=None, key=key, value=7, text=None))
        if got != (0, 0, 5, None, False, 0, {"key": want, "value": 7}):
            found.append(f"a tuple row with null job, source, seq and end and the key {key!r} read as {got}")
    got = entry(Row(job=1, source=1, seq=4, ts=None, watermark=9, end=True, key=None, value=None, text=None))
    if got != (1, 1, None, 9, True, 4, {}):
        found.append(f"a mark row (job 1, source 1, seq 4, watermark 9, end) read as {got}")
    jobs = _jobs()  # job 0: sliding-sum (1 source); job 1: scalejoin (2 sources)
    jobs = [*_jobs(), oplus_job("sliding-sum", 1, 2, sources=2)]  # sliding-sum, scalejoin, sliding-sum x 2
    rows = [
        (0, 0, 3, None, False, 0, {"key": "a", "value": 1}),
        (0, 0, 9, None, False, 1, {"key": "b", "value": 1}),
        (0, 0, None, 12, False, 2, {}),
        (0, 0, 1, None, False, 3, {"key": "c", "value": 1}),              # late: below job 0's watermark 2
        (1, 0, 6, None, False, 0, {"x": 1}),                              # bad: no y
        (1, 0, None, None, False, 0, {}),                                 # bad: no ts, watermark or end
        (0, 0, 0, None, False, 4, {"key": "c", "value": 1}),              # late
        (1, 0, 4, None, False, 0, {"x": 1, "y": 2}),
        (1, 1, None, None, True, 0, {}),
        (1, 1, 2, None, False, 1, {"a": 1, "b": 1}),                      # at job 1's watermark 2: not late
        (2, 0, -8, None, False, 0, {"key": "a", "value": 1}),             # job 2 has no previous watermark
        (2, 1, None, -7, False, 0, {}),                                   # a negative explicit watermark
        (3, 0, 5, None, False, 0, {"key": "a", "value": 1}),              # bad: no job 3 (of 3)
        (7, 0, 5, None, False, 0, {"key": "a", "value": 1}),              # bad: no job 7
        (-1, 0, 5, None, False, 0, {"key": "a", "value": 1}),             # bad: no job -1
        (0, 1, 5, None, False, 0, {"key": "a", "value": 1}),              # bad: job 0 has 1 source
        (0, 4, 5, None, False, 0, {"key": "a", "value": 1}),              # bad: job 0 has 1 source
        (0, -1, 5, None, False, 0, {"key": "a", "value": 1}),             # bad: no source -1
        (1, 2, 5, None, False, 0, {"a": 1, "b": 1}),                      # bad: job 1 has 2 sources
    ]
    out = list(summarize(jobs, {0: 2.0, 1: 2.0})(iter(rows)))
    bounds = {(0, 0): 12.0, (1, 0): 4.0, (1, 1): math.inf, (2, 0): -8.0, (2, 1): -7.0}
    if len(out) != 1 or (out[0].bounds, out[0].late, out[0].tuples, len(out[0].bad)) != (bounds, {0: 2}, 7, 9):
        shown = [(s.bounds, s.late, s.tuples, s.bad) for s in out]
        found.append(f"the summary of 19 rows (9 bad, 2 late, 7 tuples) is {shown}; expected bounds {bounds}")
    else:
        sources = [b for b in out[0].bad if " source(s)" in b]
        if (len(sources) != 4 or any("; job 0 has 1 source(s)" not in b for b in sources[:3])
                or "; job 1 has 2 source(s)" not in sources[3]):
            found.append(f"rows of a source their job does not have were reported as {out[0].bad}")
    for kept, more, want_bad in ((["p1"], ["p2", "p3", "p4"], 3), (["p1", "p2", "p3"], ["p4"], 3),
                                 ([], ["p1", "p2", "p3", "p4"], 3)):  # the driver's summary starts empty
        first = Summary({(0, 0): 3.0, (1, 1): 5.0}, {0: 3}, 4, list(kept))
        first.merge(Summary({(0, 0): 7.0, (1, 0): -1.0}, {0: 1, 1: 3}, 2, list(more)))
        if (first.bounds != {(0, 0): 7.0, (1, 1): 5.0, (1, 0): -1.0} or first.late != {0: 4, 1: 3} or first.tuples != 6
                or first.bad != (kept + more)[:want_bad]):
            found.append(f"two merged summaries ({len(kept)} and {len(more)} problems) are {first}")
    return found


def log_problems(root: str) -> list[str]:
    """The checkpoint contract (module docstring)."""
    from spark_impl.oplus.streaming_log import Log
    from spark_impl.records import CorruptStateError

    found: list[str] = []
    log = Log(root)
    try:
        log.commit(5)
        found.append("commit(5) of a checkpoint without commits returned a record")
    except KeyError:
        pass
    zeroth, first, second = log.add_request(1, 1, 3), log.add_request(0, 2, None), log.add_request(0, 3, 7)
    path = os.path.join(log.location, log.request_log.name(second))
    with open(path, "rb") as handle:
        data = handle.read()
    with open(path, "wb") as handle:
        handle.write(data[: len(data) // 2])  # a driver killed while it wrote the request
    try:
        listed = [r["id"] for r in log.requests()]
    except CorruptStateError as error:
        listed = [f"{type(error).__name__}"]
    if listed != [zeroth, first]:
        found.append(f"with a torn newest request, the requests listed are {listed}, expected [{zeroth}, {first}]")
    log.drop_requests([zeroth, first, second])
    if log.request_log.sequences() != [second]:
        found.append(f"drop_requests of every request kept {log.request_log.sequences()}, expected the newest")
    older = os.path.join(log.location, log.request_log.name(first))
    with open(older, "wb") as handle:
        handle.write(data[: len(data) // 2])
    with open(path, "wb") as handle:
        handle.write(data)
    try:
        log.requests()
        found.append("a torn request that is not the newest was read past (expected CorruptStateError)")
    except CorruptStateError:
        pass
    many = Log(os.path.join(root, "many"))  # ids above 256: no longer CPython's cached small ints
    for _ in range(260):
        many.add_request(0, 2, None)
    idents = [int(r["id"]) for r in many.requests()]
    many.drop_requests(idents)
    if many.request_log.sequences() != [260]:
        found.append(f"drop_requests of 260 requests kept {many.request_log.sequences()}, expected the newest, 260")
    return found


class _Reached(Exception):
    """Raised by :class:`_NoSpark` when a call got past its validation to the Spark context."""


class _NoSpark:
    """A SparkSession stand-in whose context is never there: reaching it means "accepted"."""

    @property
    def sparkContext(self) -> Any:  # noqa: N802 - Spark's name
        raise _Reached()


def _where(call: Callable[[], Any]) -> str:
    """``accepted`` if ``call`` reached Spark, ``InputError at <where>``, or what else it raised."""
    try:
        call()
    except _Reached:
        return "accepted"
    except InputError as error:
        return f"InputError at {error.where}"
    except Exception as error:  # noqa: BLE001 - reported as found
        return f"{type(error).__name__}: {error}"
    return "returned without Spark"


def batch_api_problems(case: dict[str, Any], root: str) -> list[str]:
    """The batch API's refusals (module docstring) before any Spark call."""
    from spark_impl.oplus import run_batch, run_scenario, run_scenarios

    bad, spark = dict(case, WA=0), _NoSpark()
    long = {"operator": "forward", "WA": 1, "WS": 1, "parallelism": 2,
            "inputs": [[{"ts": t, "value": t} for t in range(40)], []]}  # cut into ceil(40 / ROUNDS) = 3 a round
    found = [p for what, call, where in (
        ("a string for the scenarios", lambda: run_batch(None, "scenario"), "scenarios"),
        ("a bad second scenario", lambda: run_batch(None, [case, bad]), "scenarios[1]"),
        ("two items_per_round for one scenario", lambda: run_batch(None, [case], items_per_round=[1, 2]),
         "items_per_round"),
        ("one items_per_round for two scenarios", lambda: run_batch(None, [case, case], items_per_round=[1]),
         "items_per_round"),
        ("0 items per round", lambda: run_batch(None, [case], items_per_round=0), "items_per_round"),
        ("an unknown fault", lambda: run_batch(None, [case], faults=["drop-near-watermarks"]), None),
    ) for p in [refused(call, where, what)] if p is not None]
    for what, call, want in (
        ("one scenario, not in a list", lambda: run_batch(spark, cast(Any, case)), "InputError at scenarios"),
        ("one item per round", lambda: run_batch(spark, [case], items_per_round=1, sink_dir=root), "accepted"),
        ("1 and 3 items per round", lambda: run_batch(spark, [case, case], items_per_round=[1, 3], sink_dir=root),
         "accepted"),
        ("260 scenarios, one items_per_round each",
         lambda: run_batch(spark, [case] * 260, items_per_round=[2] * 260, sink_dir=root), "accepted"),
        ("2.5 items per round", lambda: run_batch(spark, [case], items_per_round=cast(Any, 2.5)),
         "InputError at items_per_round"),
        ("run_scenario's default items per round", lambda: run_scenario(case, spark=spark), "accepted"),
        ("run_scenario's default items per round, 40 items in a list", lambda: run_scenario(long, spark=spark),
         "accepted"),
        ("run_scenario with 0 items per round", lambda: run_scenario(case, spark=spark, items_per_round=0),
         "InputError at items_per_round"),
    ):
        got = _where(call)
        if got != want:
            found.append(f"run_batch with {what}: {got}, expected {want}")
    return found + _keyword_only([
        ("run_batch(spark, scenarios, faults)", lambda: cast(Any, run_batch)(spark, [case], ())),
        ("run_scenarios(spark, scenarios, faults)", lambda: cast(Any, run_scenarios)(spark, [case], ())),
        ("run_scenario(scenario, spark)", lambda: cast(Any, run_scenario)(case, spark))])


def check(case: dict[str, Any]) -> list[str]:
    """Every problem of the module docstring's contracts (empty: all kept); ``case``: a scenario."""
    root = tempfile.mkdtemp(prefix="streamproof-oplus-contracts-")
    try:
        parts = [os.path.join(root, n) for n in ("rescale", "start", "log", "sink")]
        for part in parts:
            os.makedirs(part)
        return (rescale_problems(parts[0]) + start_problems(parts[1]) + job_problems() + row_problems()
                + log_problems(parts[2]) + batch_api_problems(case, parts[3]))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_check(drawn: Sequence[tuple[dict[str, Any], int]], result: SuiteResult) -> None:
    """Append the check (a failure reports the first five problems) to ``result``."""
    append_check(result, CHECK, 6, lambda: check(drawn[0][0]) if drawn else [])


def append_check(result: SuiteResult, name: str, cases: int, problems: Callable[[], list[str]]) -> None:
    """Append the Spark-free check ``name`` to ``result``: ``problems()`` (a crash of the
    executor's code is a problem too) each count as a failed ``contract``; a failure reports
    the first five."""
    start = time.monotonic()

    try:
        found = bounded(problems, name)
    except Exception as error:  # noqa: BLE001 - a crash (or a hang) of the front end's code is a finding
        found = [f"raised {type(error).__name__}: {error}"]
    checked = CheckResult(name, cases=cases, failed=len(found), elapsed_s=time.monotonic() - start)
    result.checks.append(checked)
    if found:
        checked.oracle_failures["contract"] += len(found)
        result.failures.append(FailureReport(name, 0, ("contract",), found[0], 1, 1, 0, {"problems": found[:5]}))
