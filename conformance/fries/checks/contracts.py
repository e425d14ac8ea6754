"""The executor's Spark-free building blocks against their documented contracts.

Two promises that no run's outputs can show, because a run only needs them to be *some*
consistent function, checked in the Fries suite on Spark before any Spark job:

* **Key routing** (:mod:`spark_impl.keys`'s docstring): an integer key ``k`` (a bool, an
  integral float) goes to worker ``k mod p`` (Fries §7.2, what ``spec.fries.scenario.object_of``
  and the reference use); every other key by a stable hash of a canonical, type-tagged
  encoding of its value. So: keys equal in Python route and hash alike (``True`` = 1, ``2.0`` =
  2, a list like the tuple of its items), *distinct* keys have distinct 63-bit hashes (a
  collision among a few dozen keys means the encoding lost information: ``2.5`` encoded like
  ``2``, every key encoded alike), a key read back from JSON routes like the key written,
  the hash is the same in another Python process (string hashing is salted per process,
  ``PYTHONHASHSEED``), and a key of another type is refused with ``TypeError``. A broken
  routing still gives consistent runs (every process agrees on the broken function), so the
  output oracles see none of this.
* **Seeded-fault names** (:func:`spark_impl.faults.check_faults`): an unknown name is bad
  input (``InputError``). Accepting it would make ``--inject-fault naive-typo`` run the
  correct executor and report "no violation": a vacuous "every seeded fault is caught".

A third part, :mod:`conformance.fries.checks.keys`: the stable hash against its documented
definition and vectors. The driver's own promises and
the model's value types and bookkeeping (``test_fries_model_promises.py``), the store and record log
(``tests/spark_impl/test_store_and_record_log.py``), the Structured Streaming front end
and its input log (``test_fries_streaming_front_end.py``, ``test_fries_streaming_input_log.py``),
the entry points' refusals (``test_fries_refusals.py``), the control channel's task side (``test_fries_control_channel.py``), the replayable sources (``test_fries_replayable_sources.py``), a sink crash and
the resume's redelivery (``test_fries_sink_crash.py``), storage (jobs files, ``run_scenarios``' checkpoint, task files, manifests:
``test_fries_storage_promises.py``), the
executor's runs on the pure-Python Spark stand-in (a job 32 levels deep, restarts, costs,
retention) are tests (``tests/spark_impl/reconfig/test_fries_driver_promises.py``,
``test_fries_standin_runs.py``).

One check, ``spark_impl keys and faults vs their contracts (no Spark)``; its cases are the keys
checked. A failure names the first broken promise (``engine`` oracle, like the MCS check).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from typing import Any

from spec.errors import InputError

from conformance.core.results import CheckResult, FailureReport, SuiteResult
from conformance.core.watchdog import bounded
from conformance.fries.checks import keys

#: Name of the suite's check (:func:`run_contracts_check`).
CHECK = "spark_impl keys and fault names vs their contracts (no Spark)"

#: Keys of every supported type (``spark_impl.keys``): pairwise distinct in Python (no NaN:
#: a NaN is not equal to itself, so it cannot be looked up as a key at all).
KEYS: tuple[Any, ...] = (
    None, 0, 1, 2, 3, -1, -7, 12, 2**40 + 3, -(2**70), 2.5, -0.5, 2.25, 1e-9, 7.75, 1e300, math.inf, -math.inf,
    "", "a", "b", "ab", "2", "None", "é", "x" * 40, b"", b"a", b"2", b"ab\x00", (), (1,), (1, 2), (2, 1),
    ("a", 1), (1, "a"), ((1, 2), 3), (1, (2, 3)), (None,), (2.5,), ("", ""), (b"a", "a"),
)
#: Pairs equal in Python (or documented to route alike): they must route and hash alike.
ALIKE: tuple[tuple[Any, Any], ...] = (
    (True, 1), (False, 0), (2.0, 2), (-3.0, -3), (0.0, -0.0), (1e20, 10**20), ([1, 2], (1, 2)),
    ([["a", 1], 2.0], (("a", 1), 2)), (bytearray(b"ab"), b"ab"),
)
#: Not routable: refused with TypeError.
REFUSED: tuple[Any, ...] = (object(), {1: 2}, {1, 2}, (1, object()), 1j)
WORKERS = (1, 2, 3, 5, 7)


def key_problem() -> str | None:
    """The first broken promise of :mod:`spark_impl.keys` (module docstring), or None."""
    from spark_impl.keys import key_from_json, route, stable_hash

    hashes: dict[int, Any] = {}
    for key in KEYS:
        h = stable_hash(key)
        if not 0 <= h < 2**63:
            return f"stable_hash({key!r}) = {h} is not a 63-bit hash"
        if h in hashes:
            return (f"distinct keys {hashes[h]!r} and {key!r} have the same stable hash {h}: the encoding "
                    "loses part of the key's value")
        hashes[h] = key
        for n in WORKERS:
            got = route(key, n)
            integral = isinstance(key, int) or isinstance(key, float) and math.isfinite(key) and key.is_integer()
            want = int(key) % n if integral else got
            if not 0 <= got < n or got != want:
                return f"route({key!r}, {n}) = {got}, expected {want} (an integer key k goes to k mod p, Fries §7.2)"
        if _jsonable(key):
            back = key_from_json(json.loads(json.dumps(key)))
            if back != key or stable_hash(back) != h:
                return f"the key {key!r} read back from JSON is {back!r} (stable hash {stable_hash(back)}, not {h})"
    for a, b in ALIKE:
        if stable_hash(a) != stable_hash(b) or any(route(a, n) != route(b, n) for n in WORKERS):
            return f"{a!r} and {b!r} are the same key but hash or route differently"
    for bad in REFUSED:
        try:
            stable_hash(bad)
            route(bad, 3)
        except TypeError:
            continue
        return f"the key {bad!r} of type {type(bad).__name__} was routed instead of refused with TypeError"
    return _other_process(hashes)


def _jsonable(key: Any) -> bool:
    """Can ``key`` be written as JSON (no bytes, no infinity, anywhere inside)?"""
    if isinstance(key, tuple):
        return all(_jsonable(item) for item in key)
    return not isinstance(key, bytes) and key not in (math.inf, -math.inf)


def _other_process(hashes: dict[int, Any]) -> str | None:
    """The hashes of :data:`KEYS` in a fresh Python process with another ``PYTHONHASHSEED``."""
    code = ("import json, math, sys; from spark_impl.keys import stable_hash; "
            "from conformance.fries.checks.contracts import KEYS; "
            "print(json.dumps([stable_hash(k) for k in KEYS]))")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    if done.returncode != 0:
        return f"computing the stable hashes in another process failed: {done.stderr.strip()[-300:]}"
    other = json.loads(done.stdout)
    mine = list(hashes)
    for key, h, g in zip(KEYS, mine, other):
        if h != g:
            return f"stable_hash({key!r}) is {h} in this process and {g} in another (PYTHONHASHSEED=12345)"
    return None


def fault_problem() -> str | None:
    """None when :func:`spark_impl.faults.check_faults` accepts every seeded fault and refuses
    an unknown name with InputError."""
    from spark_impl.faults import FAULTS, check_faults

    try:
        check_faults(sorted(FAULTS))
    except InputError as error:
        return f"a seeded fault was refused: {error}"
    for wrong in (["no-such-fault"], [*sorted(FAULTS)[:1], "naive-typo"]):
        try:
            check_faults(wrong)
        except InputError:
            continue
        return f"the unknown fault names {wrong} were accepted: an injected typo would silently run no fault"
    return None


def run_contracts_check(result: SuiteResult) -> bool:
    """Run every part (module docstring), each in a time limit (a hang is a finding), and append
    the check to ``result``; True on a failure. The parts are looked up on their modules when
    the check runs."""
    check = CheckResult(CHECK)
    result.checks.append(check)
    start = time.monotonic()
    problems = []
    for name, find in (("keys", key_problem), ("faults", fault_problem), ("hash", keys.hash_problem)):
        try:
            found = bounded(find, f"the {name} part")
        except Exception as error:  # noqa: BLE001 - a crash (or a hang) of the executor's code is a finding
            found = f"{name}: raised {type(error).__name__}: {error}"
        if found is not None:
            problems.append(found)
    check.cases = len(KEYS) + len(ALIKE) + len(REFUSED) + 2 + len(keys.TABLE)  # faults: 2 wrong lists
    check.failed = len(problems)
    check.elapsed_s = time.monotonic() - start
    if problems:
        check.oracle_failures["engine"] += len(problems)
        explanation = "[engine] " + "\n    ".join(problems)
        result.failures.append(FailureReport(CHECK, 0, ("engine",), explanation, 1, 1, 0, {"problems": problems}))
    return bool(problems)
