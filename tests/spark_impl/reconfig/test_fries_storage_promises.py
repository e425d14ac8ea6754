"""The Fries executor's storage promises that no Spark run of the suite reaches, without Spark.

Each ``_<part>`` helper names the first broken promise of one module (None: it holds); the
executor runs on :class:`~conformance.standin.spark.LocalSpark`, in-process.

1. **An object store's jobs files** (:func:`jobs_file_problem`). :mod:`spark_impl.reconfig.retention`
   deletes, "on an object store, the jobs files of earlier drivers (``jobs-<digest>.pkl``)" -
   only those: the current driver's file is what every task loads the jobs from (a Python
   worker that has not cached them yet finds none once it is deleted). The check runs a small job under ``Retention(1)`` on
   ``file://<dir>/ckpt?region=x`` (pyarrow's local filesystem, a non-local store: a URI with a
   query, like the documented ``s3://key:secret@bucket/ckpt?region=...``, whose query follows
   the object's name in ``jobs_path``), with an earlier driver's ``jobs-0000000000000000.pkl``
   on it: afterwards the current driver's jobs file, and only it, is left. *Why the Spark runs
   miss it*: the ``objstore`` path's checkpoint is ``file://`` without a query (a name cut at
   ``/`` alone is then right) and holds no earlier jobs file; a task that has the jobs cached
   never reads the deleted file, so outputs stay right.
2. **run_scenarios's checkpoint** (:func:`checkpoint_dir_problem`). :func:`spark_impl.reconfig.api.run_scenarios`:
   "``checkpoint_dir`` (default: a temporary directory, removed afterwards) must be storage
   every executor sees": a given directory is the run's checkpoint and stays (committed
   progress, batch directories: it can be inspected or resumed); without one the run's
   ``streamproof-run-*`` directory is removed. *Why the Spark runs miss it*: the suite always
   passes a scratch directory and reads only the returned results (the same whichever
   directory the run used, and whether it is deleted afterwards).
3. **Framed task files** (:func:`task_file_problem`). :mod:`spark_impl.reconfig.storage`:
   ":func:`read_task_file` checks all three [magic, length, digest] before it unpickles
   anything, so a truncated, extended or bit-flipped file ... raises :class:`CorruptStateError`
   ... (a flipped byte inside a pickled number or string still unpickles). Files without the
   header (written before the framing existed) are refused the same way"; and an absent file
   reads as None, a framed object that is not a ``TaskFile`` is refused. *Why the Spark runs
   miss it*: they never damage a task file (``tests/spark_impl/test_store_and_record_log.py`` checks the framing
   of records, not this reader).
4. **ObjectStoreSink's manifests** (:func:`object_store_problem`). :mod:`spark_impl.reconfig.objectstore`:
   "if ``_manifest/<b>.json`` exists and parses, ``b`` is already committed: nothing is written
   (idempotent by batch id ...)", a manifest that does not parse is not a commit (``_read_json``:
   "None if it is absent or incomplete" - a manifest torn by a crash mid-write on ``file://`` or
   HDFS), so it is neither read nor a reason to skip the delivery made again; ``committed_files``
   lists "the part files the manifests list ..., in batch order" and ``read_committed`` returns
   "every committed row". The check delivers batch ids 100, 9, 10, 1000, 1 (numeric and string
   orders differ; neither the creation order nor its reverse is sorted), then 7 whose manifest
   it tears: the files of 1 < 9 < 10 < 100 < 1000 are listed, 7 skipped; ``deliver`` of 7 again
   commits it, of 9 again writes nothing; rows come back in batch order. *Why the Spark runs
   miss it*: the ``objstore`` path delivers each batch id once, in increasing order, and never
   tears a manifest; rows read back out of batch order went unseen there (the review found
   both order bugs surviving).
5. **The store's load cache** (:func:`store_load_problem`): a rewritten object of the same size
   is decoded again, an unchanged one served from the cache.
"""

from __future__ import annotations

import os
import pickle
import re
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from spec.fries.scenario import scenario_from_json

from support.fries_chains import chain_json
from conformance.standin.spark import LocalSpark
from spark_impl.lru import LRU
from spark_impl.reconfig import api, objectstore, storage
from spark_impl.reconfig.api import scenario_job
from spark_impl.reconfig.driver import Executor
from spark_impl.reconfig.objectstore import COLUMNS
from spark_impl.reconfig.progress import has_progress
from spark_impl.reconfig.retention import Retention
from spark_impl.reconfig.storage import batches_on
from spark_impl.store import open_store, Store

#: The earlier driver's jobs file planted on the object store (:func:`jobs_file_problem`).
EARLIER_JOBS = "jobs-0000000000000000.pkl"
#: Batch ids delivered (in this order) before the one whose manifest is torn.
DELIVERED = (100, 9, 10, 1000, 1)
TORN = 7


def _scenario(name: str) -> Any:
    return scenario_from_json(chain_json(2, 6, at=3), name)


def _jobs_file(root: str) -> str | None:
    location = f"file://{root}/ckpt?region=x"
    store = open_store(location)
    store.make_root()
    store.write_once(EARLIER_JOBS, b"an earlier driver's jobs")
    ex = Executor(LocalSpark(), [scenario_job(_scenario("jobs-file"))], "fries", location, partitions=2,
                  retention=Retention(1))
    current = str(ex.jobs_path).partition("?")[0].rsplit("/", 1)[-1]
    if not store.exists(current):
        return f"the driver's jobs file {current} is not on its object store (jobs_path {ex.jobs_path})"
    ex.run()
    jobs = [name for name in store.list("") if name.startswith("jobs")]
    if jobs != [current]:
        return (f"after a run under Retention(1) on an object store (a URI with a query), its jobs files are "
                f"{jobs}; the retention deletes the earlier drivers' jobs files ({EARLIER_JOBS}) and keeps the "
                f"current driver's ({current}: its tasks load the jobs from it)")
    return None


def _checkpoint_dir(root: str, monkeypatch: pytest.MonkeyPatch) -> str | None:
    given = os.path.join(root, "given")
    os.makedirs(given)
    results = api.run_scenarios(LocalSpark(), [_scenario("given")], "fries", checkpoint_dir=given)
    if not results or not results[0].outputs:
        return "run_scenarios of a chain scenario with checkpoint_dir returned no outputs"
    if not os.path.isdir(given) or not has_progress(given) or not batches_on(Store(given)):
        left = sorted(os.listdir(given)) if os.path.isdir(given) else "nothing (the directory is gone)"
        return (f"after run_scenarios(checkpoint_dir=...), that directory holds {left}: the caller's directory is "
                "the run's checkpoint and is kept, with its committed progress and batches (default: a temporary "
                "directory, removed afterwards)")
    private = os.path.join(root, "tmp")
    os.makedirs(private)
    monkeypatch.setattr(tempfile, "tempdir", private)
    again = api.run_scenarios(LocalSpark(), [_scenario("own")], "fries")
    if not again or not again[0].outputs:  # (outputs may differ: where a request lands is timing)
        return "run_scenarios of a chain scenario in its own temporary directory returned no outputs"
    left = sorted(name for name in os.listdir(private) if name.startswith("streamproof-run-"))
    if left:
        return (f"run_scenarios without checkpoint_dir left its temporary directory {left} behind (default: a "
                "temporary directory, removed afterwards)")
    return None


def _damaged(framed: bytes, header: int, payload: bytes) -> list[tuple[str, bytes]]:
    """Damaged copies of a task file's bytes ``framed``: each must be refused."""
    mark = payload.find(b"value-0123456789")
    assert mark >= 0, "the task file's payload holds the marker string"
    at = header + mark + len("value-")
    flipped = framed[:at] + bytes([framed[at] ^ 0x01]) + framed[at + 1:]  # '0' -> '1': still unpickles
    return [
        ("with one payload byte flipped (inside a pickled string)", flipped),
        ("truncated by 5 bytes", framed[:-5]),
        ("truncated inside its header", framed[:header - 3]),
        ("extended by one byte", framed + b"\x00"),
        ("extended by a second pickle", framed + pickle.dumps(None)),
        ("without the header (the format before the framing)", payload),
        ("with its header's first byte altered", bytes([framed[0] ^ 0x20]) + framed[1:]),
    ]


def _task_file(root: str) -> str | None:
    content = storage.TaskFile(
        objects={(0, "O1#0"): storage.ObjState(states={1: "value-0123456789", 2: 12345}, fn_req=1, switched=1)},
        outputs=[(0, "O2", "S:3", 1, 40)],
        logs={(0, "O1#0"): [("S:3", False, "S#0")]},
    )
    path = os.path.join(root, "L1-p0.pkl")
    if storage.read_task_file(path) is not None:
        return "read_task_file of an absent task file did not return None (a task that never ran)"
    storage.write_task_file(path, content)
    with open(path, "rb") as handle:
        framed = handle.read()
    back = storage.read_task_file(path)
    if back != content:
        return f"a task file read back as {back}, written as {content}"
    payload = pickle.dumps(content, protocol=pickle.HIGHEST_PROTOCOL)
    cases = _damaged(framed, storage.HEADER, payload)
    cases.append(("framed but holding a dict, not a TaskFile", storage.frame(pickle.dumps({"outputs": []}))))
    for what, data in cases:
        with open(path, "wb") as handle:
            handle.write(data)
        found = _refused(lambda: storage.read_task_file(path), storage.CorruptStateError, f"a task file {what}")
        if found is not None:
            return found
    return None


def _refused(read: Callable[[], Any], error: type[BaseException], what: str) -> str | None:
    try:
        got = read()
    except error:
        return None
    except Exception as other:  # noqa: BLE001 - the wrong error is the finding
        return (f"read_task_file of {what} raised {type(other).__name__}: {other}, not CorruptStateError "
                "(spark_impl.reconfig.storage: checked before anything is unpickled)")
    return (f"read_task_file of {what} returned {type(got).__name__} {got!r:.120}: a damaged task file must "
            "raise CorruptStateError, never be used silently (spark_impl.reconfig.storage)")


def _frame_of(batch_id: int, value: int = 10) -> Any:
    """A stand-in for a delivered DataFrame (the Fries columns): 3 rows, 2 partitions."""
    rows = [(0, batch_id, "O2", f"S:{batch_id}.{i}", f"k{i}", batch_id * value + i) for i in range(3)]
    return SimpleNamespace(columns=list(COLUMNS), rdd=LocalSpark().sparkContext.parallelize(rows, 2))


def _batches_of(files: list[str]) -> list[int]:
    out = []
    for name in files:
        found = re.search(r"/data/b(\d+)/", name)
        out.append(int(found.group(1)) if found else -1)
    return out


def _object_store(table: str) -> str | None:
    sink = objectstore.ObjectStoreSink(table, key_type="string", value_type="long")
    for batch_id in DELIVERED:
        sink.deliver(_frame_of(batch_id), batch_id)
    manifests = os.path.join(table, "_manifest")
    before = set(os.listdir(manifests))
    sink.deliver(_frame_of(TORN), TORN)
    made = sorted(set(os.listdir(manifests)) - before)
    if len(made) != 1:
        return f"delivering batch id {TORN} added the manifests {made}; one manifest per batch id is the commit"
    with open(os.path.join(manifests, made[0]), "rb") as handle:
        whole = handle.read()
    with open(os.path.join(manifests, made[0]), "wb") as handle:
        handle.write(whole[:len(whole) // 2])  # a crash mid-write (file://, HDFS)
    order = sorted(DELIVERED)
    found = _listed(table, order, f"with batch ids {list(DELIVERED)} delivered and the manifest of {TORN} torn")
    if found is not None:
        return found
    sink.deliver(_frame_of(TORN), TORN)
    order = sorted([*DELIVERED, TORN])
    found = _listed(table, order, f"after batch id {TORN}, whose manifest was torn, was delivered again")
    if found is not None:
        return found
    sink.deliver(_frame_of(9, value=-1), 9)  # already committed: nothing may be written
    return _listed(table, order, "after batch id 9, already committed, was delivered again with other rows")


def _listed(table: str, order: list[int], when: str) -> str | None:
    """The table lists exactly the batches ``order`` (ascending), their files and rows in batch order."""
    batches = _batches_of(objectstore.committed_files(table))
    if sorted(set(batches)) != order or batches != sorted(batches):
        return (f"committed_files {when} lists the part files of batch ids {batches}; the committed ones are "
                f"{order} and files come in batch order (a torn manifest is no commit)")
    rows = objectstore.read_committed(table, "string", "long").to_pylist()
    got = [(r["batch"], r["txn"], r["value"]) for r in rows]
    want = [(b, f"S:{b}.{i}", b * 10 + i) for b in order for i in range(3)]
    if [g[0] for g in got] != [w[0] for w in want] or sorted(got) != want:
        return (f"read_committed {when} returns rows of batch ids {[g[0] for g in got]} "
                f"({len(got)} rows); expected the 3 rows of each of {order}, in batch order")
    return None


def _store_load(root: str) -> str | None:
    """``Store.load`` (its docstring): "``decode(bytes of name)``, cached ...; None if absent.
    Locally the cache key is the file's stamp" (inode, mtime, size: "changes whenever the object
    is rewritten"); on an object store the key is the object's digest. So an object rewritten
    with other bytes of the *same size* - a batch plan or a request file rewritten on a
    directory used afresh - is decoded again, never served stale, and an object loaded twice
    unchanged is decoded once. A cache keyed by the size alone serves
    the old plan; no run of the suite rewrites an object with one of the same size and reads it
    in the same process. Checked on a local directory and on a ``file://`` URI."""
    for location in (os.path.join(root, "local"), "file://" + os.path.join(root, "uri")):
        store = open_store(location)
        store.make_root()
        cache: LRU[tuple[Any, ...], bytes] = LRU(8)
        decoded: list[bytes] = []

        def decode(data: bytes, decoded: list[bytes] = decoded) -> bytes:
            decoded.append(data)
            return data

        if store.load("plan.pkl", decode, cache) is not None:
            return f"Store({location!r}).load of an absent object did not return None"
        for content in (b"plan-A", b"plan-B", b"plan-C", b"longer plan D"):
            store.write_once("plan.pkl", content)
            first = store.load("plan.pkl", decode, cache)
            again = store.load("plan.pkl", decode, cache)
            if first != content or again != content:
                return (f"Store({location!r}).load after the object was rewritten as {content!r} returned "
                        f"{first!r} then {again!r}: a rewritten object (here of the same size) is never served "
                        "stale from the cache")
        if len(decoded) != 4:
            return (f"Store({location!r}).load decoded {len(decoded)} times for 4 versions each loaded twice: "
                    "an unchanged object is served from the cache")
    return None


def test_retention_deletes_only_earlier_drivers_jobs_files_on_an_object_store(tmp_path: Path) -> None:
    assert _jobs_file(str(tmp_path)) is None


def test_run_scenarios_keeps_a_given_checkpoint_and_removes_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _checkpoint_dir(str(tmp_path), monkeypatch) is None


def test_a_damaged_task_file_is_refused_before_it_is_unpickled(tmp_path: Path) -> None:
    assert _task_file(str(tmp_path)) is None


def test_object_store_sink_manifests_commit_once_in_batch_order_and_a_torn_one_is_no_commit(tmp_path: Path) -> None:
    assert _object_store(str(tmp_path / "table")) is None


def test_a_rewritten_object_of_the_same_size_is_decoded_again(tmp_path: Path) -> None:
    assert _store_load(str(tmp_path)) is None


def test_object_store_sink_writes_its_parts_on_a_filesystem_with_directories(tmp_path: Path) -> None:
    """``ObjectStoreSink`` promises ``file://`` and ``hdfs://`` URIs: its part files
    ``data/b<id>/part-<i>.parquet`` are written into directories that must be made there (S3
    has none). Regression: every Spark task raised FileNotFoundError on ``file://``."""
    table = f"file://{tmp_path}/table"
    sink = objectstore.ObjectStoreSink(table, key_type="string", value_type="long")
    sink.deliver(_frame_of(3), 3)
    files = objectstore.committed_files(table)
    assert files and all((tmp_path / "table" / name).is_file() for name in files)
