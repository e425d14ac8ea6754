"""Promises of ``spark_impl.oplus`` and ``spark_impl.store`` that no Spark run of the O+ suite
sees (no Spark, about a second).

The O+ suite's Spark checks compare outputs (and their emission round and instance) with the
sequential reference on drawn scenarios: parallelism 1-5, timestamps below a few hundred, string
keys, texts of single-space-separated words from a fixed vocabulary, the default sink and a local
checkpoint. Each promise below is broken by a one-line bug that leaves every such run's outputs
unchanged, so only a direct check sees it. :func:`oplus_model_problem` runs the parts in order and
names the first broken promise:

* **identity** - ``instance.py``: an instance updates "only the keys it owns under the scenario's
  current key -> instance mapping ``crc32(key) % parallelism``"; ``streaming_round.py``: "the task
  of instance ``j`` reads, for each rescaled job, *every* previous state file and keeps the keys
  that the new mapping gives it"; ``driver.py``: a handover moves every key state to "its
  instance under the new mapping (... keys that keep their instance stay in the same partition
  index)" and :class:`~spark_impl.oplus.driver.Handover` counts ``keys_moved``. Scenarios allow
  parallelism up to 1024 (``spec.oplus.budget.MAX_PARALLELISM``); the drawn ones stay at 5 or
  below, where every instance index is one of CPython's cached small ints (up to 256), so an
  ``is`` for ``==`` there behaves like ``==``. Checked at parallelism 1024 with a key of instance
  257..511 (a fresh int, as a task's partition index is): one round of
  :func:`~spark_impl.oplus.instance.process` emits its window, ``load_state`` after a rescale to
  1024 gives the key to its instance, a handover 1024 -> 512 on the stand-in Spark counts one
  moved key of two and puts each where the new mapping says;
* **event times up to 2**62** - ``spec.oplus.scenario``: "Event times, watermarks, WA and WS are
  within ``-2**62..2**62`` (MAX_TIME)"; ``feed.py``: "the bound of a list is the largest timestamp
  or explicit watermark it has delivered ... the round's watermark is the minimum bound over the
  lists"; ``streaming_log.encode_time``: "A watermark or bound as JSON: an int", ``decode_time``:
  "The inverse of encode_time". A float holds integers exactly only up to 2**53; the drawn
  timestamps are small. Checked: the batch driver's own loop (``Feed``, ``round_plans``,
  ``process``, handovers and the sink, on the pure-Python stand-in Spark) against the sequential
  reference, outputs and emission rounds, on sliding-sum at ``2**60 + 200 .. 2**60 + 250``, one
  item per round (a float watermark ``2**60 + 256`` expired the window ``[2**60 + 250, +1)``
  before the second list's tuple at ``2**60 + 250`` came: ``(251, a, 1)`` twice, not
  ``(251, a, 2)``); the live path's ``decode_time`` is checked by
  :func:`conformance.oplus.checks.commit.format_problems` (``2**60 + 1`` written and read back);
* **bounded state** - ``instance.py``: every window instance with ``L + WS <= W`` is emitted and
  dropped, a WT single chain "is dropped when empty", ScaleJoin's tuples are "purged when
  ``ts + WS <= W``", forward "keeps nothing". An empty ``{}`` or ``[]`` left for every key ever
  seen (or an empty scenario entry) changes no output: the state grows without bound, and no
  oracle reads its size. Checked: every operator and WT, one round to ``W = +inf`` and one to a
  finite ``W`` past every window, leave the state ``{}``;
* **typed keys** - ``OperatorConfig.typed_keys``: "sliding-sum: the key field as is (any type),
  not str() of it"; ``_expire``: "str: keys of any type". Only the live path sets it, and its
  drawn keys are strings. Checked with ``route_key`` (the live f_mu) on the keys ``7``,
  ``(1, "a")``, ``(1, None)``, ``(1, 2)``, ``True`` at parallelism 1 (all keys in one instance)
  and 4: nothing raises, each key is owned by ``route_key(key, p)`` only and its output keeps
  the key, of its type;
* **text keys** - ``keys_of``: "f_MK: the keys a tuple belongs to", the reference's
  (``reference.oplus.operators.text``): "Words are the whitespace-separated tokens of the text
  (``str.split()``)", hashtags are "words starting with '#' and longer than '#'". The drawn texts
  join words of a fixed vocabulary (no bare ``#``) with single spaces. Checked: ``keys_of`` of
  wordcount, paircount (distance 3 and any) and longest-tweet equal ``words_of``, ``pairs_of``,
  ``hashtags_of`` on ``"#"``, ``"# #a ##"``, ``"a  b"``, ``"\\ta b\\n"``, ``" #x  #x "``,
  ``"#a\\t#b\\n#c"`` (:data:`TEXTS`);
* **the sink directory** - ``run_batch``: "``sink_dir`` must be shared storage on a cluster
  (default: a fresh local temp dir)": a caller's directory is the caller's, the temp dir is the
  run's. The suite never passes ``sink_dir``, and a leaked temp dir changes no output. Checked on
  the stand-in Spark: a file already in ``sink_dir`` survives ``run_batch``, the temp sink
  ``run_scenario`` made (``tempfile.mkdtemp`` recorded while the part runs) is gone afterwards;
* **WT single shift** - ``_drain_chain``: "Output and shift (f_S) the chain while its instance is
  expired" (STRETCH Alg. 2 forwardAndShift: the next instance is the earliest one holding a
  remaining tuple). Shifting by WA only gives the same outputs after ``gap / WA`` iterations: a
  hang on epoch-millisecond timestamps, invisible on the drawn ones. Checked within 1 s: WA 1,
  WS 2, tuples at 0 and 10**12, ``W = 10**12``;
* **filesystems per (scheme, netloc, query)** - ``spark_impl/store.py``: "Filesystems are opened
  once per process and ``(scheme, netloc, query)``". The suite's checkpoints are local paths and
  the object-store tests use one bucket and one endpoint, so a cache key without the netloc (the
  bucket, the credentials) or the query (region, endpoint) serves a second bucket or endpoint
  the first one's filesystem unseen. Checked with ``pyarrow.fs.FileSystem`` replaced by a
  recorder while the part runs (and the cache emptied, then restored): URIs that differ only in
  the bucket, or only in the query, open distinct filesystems with their own base; the same URI
  again is served from the cache;
* **keep** - ``start_oplus_query(..., keep: int = 2)``, "``keep``: commit records retained"
  (docs/spark.md: after a run "the last two commit records"). The live check starts with the
  default, and how many records stay changes no output. Checked: a start with the default hands
  ``keep == 2`` to its ``foreachBatch`` handler.
"""

from __future__ import annotations

import itertools
import math
import os
import shutil
import tempfile
from typing import Any, Callable, Iterable, Iterator
from urllib.parse import urlsplit

from spec.oplus.model import StreamTuple
from spec.oplus.scenario import instance_of, parse_scenario

from reference.oplus.operators.text import hashtags_of, pairs_of, words_of

from conformance.core.matcher import compare
from conformance.core.results import SuiteResult
from conformance.core.watchdog import Hang, bounded
from conformance.oplus.checks.live_contracts import append_check
from conformance.oplus.oracles import as_rows, sequential, show
from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import Stream

#: Name of the check in the O+ suite.
CHECK = "spark_impl O+ model promises vs their definitions (no Spark)"
#: Parallelism of the identity part: the largest a scenario allows (spec.oplus.budget).
WIDE = 1024
#: Base of the big event times (above 2**53, below MAX_TIME = 2**62).
BIG = 2**60
#: The WT single shift part's gap (epoch milliseconds are about 1.7 * 10**12) and time limit.
GAP, SHIFT_LIMIT_S = 10**12, 1.0
#: The texts of the text keys part.
TEXTS = ("#", "# #a ##", "a  b", "\ta b\n", " #x  #x ", "#a\t#b\n#c", "#a b #a c\u00a0d")
#: The non-string keys of the typed keys part.
TYPED_KEYS: tuple[Any, ...] = (7, (1, "a"), (1, None), (1, 2), True)


def _key_of_instance(low: int, high: int, size: int = WIDE) -> tuple[str, int]:
    """The first key ``k<n>`` with ``low <= instance_of(key, size) < high``, and its instance."""
    for n in itertools.count():
        key = f"k{n}"
        index = instance_of(key, size)
        if low <= index < high:
            return key, index
    raise AssertionError("unreachable")


def identity_problems(root: str) -> list[str]:
    """Instances above 256 at parallelism 1024 (module docstring, **identity**)."""
    import spark_impl.oplus.driver as driver
    import spark_impl.oplus.streaming_round as streaming_round
    from spark_impl.oplus.instance import ScenarioRound, process
    from spark_impl.oplus.operators import OperatorConfig
    from spark_impl.oplus.streaming_log import write_part

    op = OperatorConfig("sliding-sum", 1, 1, single=False)
    stay, index = _key_of_instance(257, WIDE // 2)  # same instance at 1024 and 512
    move, gone = _key_of_instance(WIDE // 2 + 257, WIDE)  # instance - 512 at 512
    found = []
    _, outputs = process(int(str(index)), {}, [(0, (5, 0, 0, {"key": stay, "value": 3}))],
                         {0: ScenarioRound(op, WIDE, -math.inf, math.inf)})
    if outputs != [(0, 6, stay, 3)]:
        found.append(f"instance {index} of {WIDE} (above 256) processing a tuple of its own key {stay!r} emitted "
                     f"{outputs}, expected [(0, 6, {stay!r}, 3)]: it does not own the keys crc32(key) % {WIDE} "
                     "gives it")
    location = os.path.join(root, "oplus")
    write_part(location, "state", 4, 0, [(0, {stay: {5: 3}})])
    plan = streaming_round.RoundPlan({0: ScenarioRound(op, WIDE, 6, math.inf)}, WIDE, 4, 1, frozenset({0}),
                                     location, 5)
    mine = streaming_round.load_state(plan, int(str(index)))
    other = streaming_round.load_state(plan, int(str((index + 1) % WIDE)))
    if mine != {0: {stay: {5: 3}}} or other:
        found.append(f"load_state after a rescale 1 -> {WIDE} gave instance {index} {mine} and instance "
                     f"{(index + 1) % WIDE} {other}, expected {{0: {{{stay!r}: {{5: 3}}}}}} and {{}}: the key goes to "
                     f"instance {index} (crc32 % {WIDE})")
    sc = LocalSpark().sparkContext
    parts: list[dict[int, dict[str, Any]]] = [{} for _ in range(WIDE)]
    parts[index], parts[gone] = {0: {stay: {5: 3}}}, {0: {move: {5: 4}}}
    states, handover = driver._handover(sc, sc.parallelize(parts, WIDE), WIDE, WIDE // 2, {0: WIDE // 2}, 0)
    placed = {i: part for i, part in enumerate(states.collect()) if part}
    want = {index: {0: {stay: {5: 3}}}, gone - WIDE // 2: {0: {move: {5: 4}}}}
    if handover.keys_moved != 1 or placed != want:
        found.append(f"a handover {WIDE} -> {WIDE // 2} of key {stay!r} (instance {index} before and after) and key "
                     f"{move!r} (instance {gone}, then {gone - WIDE // 2}) counted keys_moved {handover.keys_moved} "
                     f"and placed {placed}, expected 1 and {want}")
    return found


def big_times_case() -> dict[str, Any]:
    """Sliding-sum WT multi, WA = WS = 1, two lists at ``2**60 + 200 .. 2**60 + 250``."""
    def item(ts: int) -> dict[str, Any]:
        return {"ts": BIG + ts, "key": "a", "value": 1}

    return {"operator": "sliding-sum", "WA": 1, "WS": 1, "WT": "multi", "parallelism": 2,
            "inputs": [[item(200), item(250)], [item(250)]]}


def big_time_problems(root: str) -> list[str]:
    """The batch driver's loop on event times above 2**53 (module docstring)."""
    from spark_impl.oplus import run_batch

    case = big_times_case()
    # round 0's watermark is 2**60 + 200 (the first item of each list), the last round's +inf:
    # a rescale at 2**60 + 201 is never reached while the stream runs (as float, 2**60 + 200 is
    # 2**60 + 256, which reaches it)
    wide = dict(case, parallelism=3, reconfigurations=[{"watermark": BIG + 201, "parallelism": 1}])
    result = run_batch(LocalSpark(), [case, wide], items_per_round=1, sink_dir=os.path.join(root, "big"))
    found = []
    for scenario, rows in zip((case, wide), result.rows):
        got = as_rows(rows)
        mismatch = compare(sequential(parse_scenario(scenario)), got)
        if mismatch is not None:
            found.append(f"sliding-sum at 2**60 + 200..250, one item per round: the driver's outputs (ts - 2**60) "
                         f"{[(ts - BIG, k, v) for ts, k, v in got]} differ from the sequential reference: "
                         f"{mismatch.explain(show).splitlines()[0]} (a watermark rounded through float: exact only "
                         "up to 2**53)")
    if not found and result.applied[1] != 0:
        found.append(f"a rescale at 2**60 + 201 was applied {result.applied[1]} time(s) after a round whose watermark "
                     "is 2**60 + 200, expected never (a watermark rounded through float: exact only up to 2**53)")
    return found


def _operators() -> list[tuple[Any, list[dict[str, Any]]]]:
    """Every operator and WT with fields for two tuples of each source."""
    from spark_impl.oplus.operators import OperatorConfig

    text = [{"text": "a #b c"}, {"text": "#b d"}]
    found: list[tuple[Any, list[dict[str, Any]]]] = []
    for single in (False, True):
        found += [(OperatorConfig("sliding-sum", 2, 4, single), [{"key": "k", "value": 1}, {"key": "j", "value": 2}]),
                  (OperatorConfig("wordcount", 2, 4, single), text),
                  (OperatorConfig("paircount", 2, 4, single), text),
                  (OperatorConfig("longest-tweet", 2, 4, single), text)]
    found += [(OperatorConfig("scalejoin", 1, 3, False, keys=2, band=1),
               [{"x": 1, "y": 1}, {"a": 1, "b": 2}]),
              (OperatorConfig("forward", 1, 1, False, keys=2), [{"value": 1}, {"value": 2}])]
    return found


def empty_state_problems() -> list[str]:
    """Nothing left after every window closed (module docstring, **bounded state**)."""
    from spark_impl.oplus.instance import ScenarioRound, process
    from spark_impl.oplus.operators import Item

    found = []
    for op, fields in _operators():
        items: list[tuple[int, Item]] = [(0, (ts, source, ts, fields[source % len(fields)]))
                                         for ts in (3, 5, 10) for source in (0, 1)]
        for watermark in (math.inf, 10 + op.ws + op.wa):
            state, _ = process(0, {}, list(items), {0: ScenarioRound(op, 1, -math.inf, watermark)})
            if state:
                found.append(f"{op.name} WT {'single' if op.single else 'multi'}: after a round to the watermark "
                             f"{watermark} (past every window of tuples at 3..10) the state is {state}, expected {{}} "
                             "(closed windows, empty chains and keys are dropped: bounded state)")
                break
    return found


def typed_key_problems() -> list[str]:
    """Sliding-sum keys of any type on the live path (module docstring, **typed keys**)."""
    from spark_impl.oplus.instance import ScenarioRound, owners, process
    from spark_impl.oplus.operators import Item, OperatorConfig
    from spark_impl.oplus.streaming_jobs import route_key

    op = OperatorConfig("sliding-sum", 2, 2, single=False, typed_keys=True)
    items: list[tuple[int, Item]] = [(0, (1, 0, i, {"key": key, "value": i + 1})) for i, key in enumerate(TYPED_KEYS)]
    found = []
    for size in (1, 4):
        plans = {0: ScenarioRound(op, size, -math.inf, math.inf, route=route_key)}
        emitted: dict[int, list[Any]] = {}
        for index in range(size):
            try:
                _, outputs = process(index, {}, list(items), plans)
            except Exception as error:  # noqa: BLE001 - a crash is the finding
                return [f"typed sliding-sum keys {TYPED_KEYS} at parallelism {size}: instance {index} raised "
                        f"{type(error).__name__}: {error}"]
            emitted[index] = [key for _, _, key, _ in outputs]
        for i, key in enumerate(TYPED_KEYS):
            home = route_key(key, size)
            routed = owners({"key": key, "value": 1}, op, size, route_key)
            holders = [j for j, keys in emitted.items() for k in keys if k == key and type(k) is type(key)]
            if routed != {home} or holders != [home]:
                found.append(f"typed sliding-sum key {key!r} ({type(key).__name__}) at parallelism {size}: routed to "
                             f"{sorted(routed)}, emitted with its type by {holders}, expected instance {home} "
                             f"(route_key) once; outputs per instance {emitted}")
                break
    return found


def text_key_problems() -> list[str]:
    """f_MK of the text operators against the reference's (module docstring, **text keys**)."""
    from spark_impl.oplus.operators import OperatorConfig, keys_of

    found = []
    for text in TEXTS:
        t = StreamTuple(0, 0, 0, text)
        for op, want in ((OperatorConfig("wordcount", 1, 1, False), words_of(t)),
                         (OperatorConfig("paircount", 1, 1, False, distance=3), pairs_of(text, 3)),
                         (OperatorConfig("paircount", 1, 1, False, distance=None), pairs_of(text, None)),
                         (OperatorConfig("longest-tweet", 1, 1, False), hashtags_of(t))):
            got = keys_of(op, {"text": text})
            if got != sorted(want):
                found.append(f"{op.name} keys of the text {text!r} are {got}, the reference's {sorted(want)} "
                             "(whitespace-separated words; hashtags longer than '#')")
    return found


class _Recorder:
    """``tempfile.mkdtemp`` that remembers the O+ sinks it made."""

    def __init__(self, real: Callable[..., str]) -> None:
        self.real = real
        self.made: list[str] = []

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        path = self.real(*args, **kwargs)
        if "oplus-sink" in str(kwargs.get("prefix", "")):
            self.made.append(path)
        return path


def sink_dir_problems(root: str) -> list[str]:
    """A caller's sink directory is kept, a temp sink removed (module docstring)."""
    import spark_impl.oplus as oplus

    case = {"operator": "forward", "WA": 1, "WS": 1, "parallelism": 2,
            "inputs": [[{"ts": 1, "value": 5}], [{"ts": 2, "value": 6}]]}
    found = []
    sink = os.path.join(root, "sink")
    os.makedirs(sink)
    sentinel = os.path.join(sink, "mine.txt")
    with open(sentinel, "w", encoding="utf-8") as handle:
        handle.write("the caller's")
    rows = oplus.run_batch(LocalSpark(), [case], sink_dir=sink).rows[0]
    if not os.path.exists(sentinel):
        found.append("run_batch(..., sink_dir=root) deleted the caller's directory (a file already in it is gone)")
    recorder = _Recorder(tempfile.mkdtemp)
    setattr(tempfile, "mkdtemp", recorder)
    try:
        again = oplus.run_scenario(case, spark=LocalSpark())
    finally:
        setattr(tempfile, "mkdtemp", recorder.real)
        left = [path for path in recorder.made if os.path.exists(path)]
        for path in left:
            shutil.rmtree(path, ignore_errors=True)  # the leak found: ours to remove
    if len(recorder.made) != 1 or left:
        found.append(f"run_scenario made the temp sinks {recorder.made} and left {left} behind, expected one, removed "
                     "(default sink: a fresh temp dir, the run's own)")
    if sorted(map(str, rows)) != sorted(map(str, again)) or len(rows) != 2:
        found.append(f"forward of two tuples gave the rows {rows} with a sink_dir and {again} without")
    return found


def shift_problems() -> list[str]:
    """WT single shifts to the next tuple's instance in one step (module docstring)."""
    from spark_impl.oplus.instance import ScenarioRound, process
    from spark_impl.oplus.operators import OperatorConfig

    op = OperatorConfig("sliding-sum", 1, 2, single=True)
    items = [(0, (0, 0, 0, {"key": "k", "value": 1})), (0, (GAP, 0, 1, {"key": "k", "value": 2}))]
    what = f"WT single sliding-sum (WA 1, WS 2) of tuples at 0 and 10**12, one round to the watermark 10**12"
    try:
        state, outputs = bounded(lambda: process(0, {}, list(items), {0: ScenarioRound(op, 1, -math.inf, GAP)}),
                                 what, SHIFT_LIMIT_S)
    except Hang:
        return [f"{what} did not finish within {SHIFT_LIMIT_S:g} s: the chain shifts WA by WA over the gap "
                "(Alg. 2 forwardAndShift: to the earliest instance of the next tuple)"]
    # instances -1 and 0 hold ts 0 and close; the chain moves to 10**12 - 1, the first instance of ts 10**12
    want_state, want_out = {0: {"k": [GAP - 1, [(GAP, 2)]]}}, [(0, 1, "k", 1), (0, 2, "k", 1)]
    if state != want_state or sorted(outputs) != want_out:
        return [f"{what}: state {state} and outputs {sorted(outputs)}, expected {want_state} and {want_out}"]
    return []


class _FileSystem:
    """``pyarrow.fs.FileSystem`` stand-in: ``from_uri`` records its calls."""

    calls: list[str] = []

    @classmethod
    def from_uri(cls, uri: str) -> tuple[Any, str]:
        cls.calls.append(uri)
        return object(), urlsplit(uri).netloc.rsplit("@", 1)[-1]


def store_problems() -> list[str]:
    """Filesystems cached per ``(scheme, netloc, query)`` (module docstring)."""
    import pyarrow.fs as pafs

    import spark_impl.store as store

    base = "s3://key:secret@one/ckpt/oplus?region=r1"
    uris = (base, base.replace("@one/", "@two/"), base.replace("r1", "r2"), base.replace("oplus?", "oplus/state?"),
            base)
    saved, real = dict(store._FILESYSTEMS), pafs.FileSystem
    store._FILESYSTEMS.clear()
    _FileSystem.calls = []
    setattr(pafs, "FileSystem", _FileSystem)
    try:
        got = [store.resolve(uri) for uri in uris]
    finally:
        setattr(pafs, "FileSystem", real)
        store._FILESYSTEMS.clear()
        store._FILESYSTEMS.update(saved)
    found = []
    one, two, region, inner, again = got
    for what, (fs, path), want in (("another bucket", two, "two/ckpt/oplus"),
                                   ("another query", region, "one/ckpt/oplus")):
        if fs is one[0] or path != want:
            whose = "the first URI's" if fs is one[0] else "its own"
            found.append(f"resolve of {uris[0]} then of one with {what} gave the path {path!r} (expected {want!r}) on "
                         f"{whose} filesystem: a filesystem is opened per "
                         "(scheme, netloc, query)")
    if inner[0] is not one[0] or inner[1] != "one/ckpt/oplus/state" or again != one or len(_FileSystem.calls) != 3:
        found.append(f"resolve of {uris[0]} again and of a path under it gave {again[1]!r} and {inner[1]!r} after "
                     f"{len(_FileSystem.calls)} filesystems opened (expected 3: the same (scheme, netloc, query) is "
                     "served from the cache)")
    return found


def keep_problems(root: str) -> list[str]:
    """``start_oplus_query``'s documented default ``keep`` (module docstring)."""
    from spark_impl.oplus.streaming import start_oplus_query
    from spark_impl.oplus.streaming_jobs import oplus_job

    stream = Stream()
    start_oplus_query(None, stream, [oplus_job("forward", 1, 1)], checkpoint_dir=os.path.join(root, "keep"),
                      sink=None)  # type: ignore[arg-type]  # no Spark: the stand-in writer keeps the handler
    keep = getattr(stream.writeStream.handler, "keep", None)
    if keep != 2:
        return [f"start_oplus_query without keep hands keep={keep} to its foreachBatch handler, expected the "
                "documented default 2 (the last two commit records)"]
    return []


def _parts(root: str) -> Iterator[tuple[str, Callable[[], list[str]]]]:
    def at(name: str) -> str:
        path = os.path.join(root, name)
        os.makedirs(path)
        return path

    yield "identity", lambda: identity_problems(at("identity"))
    yield "big times", lambda: big_time_problems(at("big"))
    yield "bounded state", empty_state_problems
    yield "typed keys", typed_key_problems
    yield "text keys", text_key_problems
    yield "sink directory", lambda: sink_dir_problems(at("sink"))
    yield "WT single shift", shift_problems
    yield "store", store_problems
    yield "keep", lambda: keep_problems(at("keep"))


def oplus_model_problem() -> str | None:
    """The first broken promise of the module docstring, in one line naming it; None if all hold."""
    root = tempfile.mkdtemp(prefix="streamproof-oplus-model-")
    try:
        for name, part in _parts(root):
            try:
                found = part()
            except Exception as error:  # noqa: BLE001 - a crash of the executor's code is a finding
                found = [f"raised {type(error).__name__}: {error}"]
            if found:
                return f"{name}: {found[0]}".replace("\n", " ")
        return None
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_check(result: SuiteResult) -> None:
    """Append the check to ``result`` (a failure is a ``contract`` failure)."""
    append_check(result, CHECK, 9, lambda: [p for p in [oplus_model_problem()] if p is not None])
