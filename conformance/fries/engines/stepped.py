"""The ``stepped`` path of :mod:`conformance.fries.engines.paths`: control messages released batch
by batch, so the interleavings that need alignment happen on every run, not by timing luck.

On Spark a control message (FCM) reaches an object once ``issued + delay(obj)`` has passed on
the wall clock (``spark_impl.reconfig.control``), so whether two heads of one component
switch micro-batches apart - the only time a member must align - depended on how long this
machine's batches took (``missing-alignment`` was caught in about 1 case of 60). Here the
harness owns the clock of each request instead:

* every job gets ``fcm_delay`` = (:data:`FAR_MS` / 10, :data:`FAR_MS`): by the clock no FCM
  ever arrives during a run (days), and the per-object delays (a seeded draw) give a fixed
  *release order*. The seed is chosen (:func:`adversarial_seed`) so that the order is
  downstream first: reconfigured objects far from the sources get their FCM before their
  upstream ones (a wrong MCS or a naive switch then lets a transaction see the new version
  downstream and the old one upstream);
* before each micro-batch the harness moves the active request's ``issued`` back so that
  exactly the objects up to the ``i``-th component head (in release order) see it, with
  ``i`` = (batches since the request was made) // :data:`GAP`: heads of one component switch
  :data:`GAP` batches apart while data keeps flowing, so a member holds back its early
  parents' new-version input across batches and sees old-version input after the first
  marker (wrong alignment, a wrong version tag or an any-parent rule is a cycle);
* per-tuple costs and stragglers are dropped (they only served the timing); restarts stay,
  and a request re-made after a restart (attempt + 1) is released from the start again;
* after every batch the harness checks that no head switched before its release (the FCM
  delivery hook itself), and for every request (fries) that the executor synchronises exactly
  the operators and heads Fries Alg. 1-4 name (``spec.fries.mcs.fries_mcs_definition``: a
  larger MCS is still serializable, so no other oracle sees a lost pruning rule; a smaller
  one is usually seen by ``serializable`` too): either is an ``engine`` failure; and
  (:meth:`Releases.announced`) that a request was made after a task of its batch started.

Reported delays are meaningless here (``issued`` was moved) and are dropped from the results.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import replace
from typing import Any, Sequence

from spec.fries.dataflow import OperatorKind
from spec.fries.mcs import fries_mcs_definition
from spec.fries.scenario import Scenario, operator_of

from conformance.fries.outcome import PathFailure
from spark_impl.reconfig import scenario_job, Executor, collect_results
from spark_impl.reconfig.control import ControlEntry
from spark_impl.reconfig.task import started_name

#: Upper FCM delay (ms): about 11.6 days, so no FCM arrives by the clock during a run.
FAR_MS = 1e9
#: Micro-batches between the releases of two heads of a request.
GAP = 2
#: Seeds tried by :func:`adversarial_seed`.
SEEDS = 200
_MAX_STEPS = 2000
#: A request made this much (s) before its batch's first task started is a timed-out wait for
#: the tasks (``Executor._wait_for_tasks`` waits 30 s), not a driver that did not wait.
_WAIT_S = 25.0
#: Objects whose delays are closer than this (s) are released together (none may see its
#: FCM by the clock during a run).
_TOGETHER_S = 3600.0


def levels(scenario: Scenario) -> dict[str, int]:
    """Distance of every non-source object from the sources (longest path)."""
    flow = scenario.dataflow
    level: dict[str, int] = {}
    for name in flow.topological_order():
        level[name] = 0 if flow.kind(name) is OperatorKind.SOURCE else \
            1 + max((level[p] for p in flow.parents(name)), default=0)
    return {obj: level[name] for name in flow.names if flow.kind(name) is not OperatorKind.SOURCE
            for obj in scenario.objects(name)}


def _entry(s: int, j: int, attempt: int, seed: int) -> Any:
    return ControlEntry(s, j, attempt, 0.0, 0, FAR_MS / 10, FAR_MS, seed)


def adversarial_seed(scenario: Scenario, s: int) -> int:
    """The FCM seed (of :data:`SEEDS`) whose release order for job index ``s`` is the most
    downstream-first (pairs of objects at different levels released deeper one first; first
    request, first and second attempt)."""
    level = levels(scenario)
    objs = sorted(level)
    best, best_score = 0, -1
    for seed in range(SEEDS):
        score = 0
        for attempt in (1, 2):
            entry = _entry(s, 1, attempt, seed)
            delay = {o: entry.delay_s(o) for o in objs}
            score += sum(1 for a in objs for b in objs if level[a] > level[b] and delay[a] < delay[b])
        if score > best_score:
            best, best_score = seed, score
    return best


def stepped_job(scenario: Scenario, s: int, job: Any = None) -> Any:
    """The executor job of ``scenario`` (or ``job``, built from it) at job index ``s`` with the
    harness's FCM timing."""
    job = scenario_job(scenario) if job is None else job
    timing = replace(job.timing, seed=adversarial_seed(scenario, s), fcm_delay=(FAR_MS / 10, FAR_MS),
                     operator_cost={}, stragglers={})
    return replace(job, timing=timing)


class Releases:
    """Per active request (job, request, attempt): batches seen and what was released."""

    def __init__(self) -> None:
        self.seen: dict[tuple[int, int, int], int] = {}
        self.released: dict[tuple[int, int, int], set[str]] = {}
        self.problems: dict[int, str] = {}
        self.commits = CommitWatch()

    def advance(self, executor: Any) -> dict[int, Any]:
        """Release the next heads of every active request (module docstring); return the
        active requests (job -> ``Active``) as they are before the batch."""
        now = time.time()
        active: dict[int, Any] = {}
        for s, st in enumerate(executor.state):
            a = st.live.active
            if a is None or executor.scheduler == "epoch":
                continue
            active[s] = a
            if a.attempt < 1 and s not in self.problems:  # the FCM draws (and adversarial_seed) key on it
                self.problems[s] = f"R{a.j} was made as attempt {a.attempt}: attempts count from 1 (re-made: attempt + 1)"
            key = (s, a.j, a.attempt)
            if key not in self.seen and executor.scheduler == "fries":
                self._check_mcs(s, st.job, a)
            step = self.seen[key] = self.seen.get(key, -1) + 1
            t = st.job.timing
            entry = _entry(s, a.j, a.attempt, t.seed)
            delay = {o: entry.delay_s(o) for o in a.required}
            order = sorted(a.required, key=lambda o: delay[o])
            heads = [o for o in order if o in set(a.heads)]
            upto = step // GAP
            last = delay[heads[upto]] if upto < len(heads) else max(delay.values(), default=0.0)
            last = max([last] + [d for d in delay.values() if d - last < _TOGETHER_S])
            a.issued = now - last
            self.released[key] = {o for o in a.required if delay[o] <= last}
        executor._publish()  # noqa: SLF001 - the harness owns the FCM clock (module docstring)
        return active

    def _check_mcs(self, s: int, job: Any, a: Any) -> None:
        """The request's objects and heads against the spec's MCS (module docstring)."""
        if a.j > len(job.planned):
            return
        targets = job.planned[a.j - 1].request.operators
        vertices, edges, _, _ = fries_mcs_definition(job.dataflow, targets)
        heads = {v for v in vertices if not any(b == v for _, b in edges)}
        got = ({operator_of(o) for o in a.required}, {operator_of(o) for o in a.heads})
        if got != (set(vertices), heads) and s not in self.problems:
            self.problems[s] = (f"R{a.j} synchronises operators {sorted(got[0])} with heads {sorted(got[1])}; "
                                f"Fries Alg. 1-4 name {sorted(vertices)} with heads {sorted(heads)}")

    def drive(self, executor: Any) -> None:
        """Step ``executor`` until every job is done, releasing heads before and checking after
        every batch."""
        for _ in range(_MAX_STEPS):
            if executor.done():
                return
            with executor.lock:
                active = self.advance(executor)
            executor.step()
            self.announced(executor, active)
            self.check(executor, active)
        raise RuntimeError(f"stepped jobs not finished after {_MAX_STEPS} batches")

    def announced(self, executor: Any, active: dict[int, Any]) -> None:
        """A planned request is made while its batch's tuples are being processed
        (``Executor.step``: the batch's first-level tasks create start markers, the driver waits
        for one, then makes the request). So after the batch that made a request there is a
        start marker of that batch, created no later than the request's ``issued``. A driver
        that makes it before any task started (or tasks that never mark) gives runs the
        oracles accept - a request made before the batch's tuples is a legal run - but the
        suite's mid-batch races are gone (``while not worker.is_alive()`` is
        equivalent for every oracle, so this check is what sees it)."""
        if not executor.store.local:
            return
        g = executor.g - 1
        for s, st in enumerate(executor.state):
            a = st.live.active
            if a is None or s in active or s in self.problems or a.user or a.epoch_batch != g + 1:
                continue
            marks = [executor.store.path(started_name(g, 1, p)) for p in range(executor.partitions)]
            times = [os.path.getmtime(m) for m in marks if os.path.exists(m)]
            if not times:
                self.problems[s] = f"R{a.j} was made in batch {g}, but no task of that batch marked its start"
            elif 0.01 < min(times) - a.issued < _WAIT_S:  # beyond: the driver's 30 s wait timed out (overload)
                self.problems[s] = (f"R{a.j} was made {min(times) - a.issued:.3f} s before the first task of its "
                                    f"batch {g} started: requests land while the batch's tuples are processed")

    def results(self, results: Any) -> list[Any]:
        """``results`` (``RunResult`` s) with delays dropped (``issued`` was moved), or a
        ``PathFailure`` for a job with a problem."""
        return [PathFailure(r.scenario_index, self.problems[r.scenario_index]) if r.scenario_index in self.problems
                else replace(r, delays_ms=()) for r in results]

    def check(self, executor: Any, active: dict[int, Any]) -> None:
        """Record a head that switched before its release (the first one per job): the requests
        active before the batch, and those made during it (nothing of them was released); and
        a commit that broke the Fries §7.3 rule or a committed view that changed without a
        commit (:class:`CommitWatch`)."""
        for s, problem in self.commits.after_batch(executor).items():
            self.problems.setdefault(s, problem)
        made = {s: st.live.active for s, st in enumerate(executor.state)
                if st.live.active is not None and s not in active and executor.scheduler != "epoch"}
        for s, a in [*active.items(), *made.items()]:
            released = self.released.get((s, a.j, a.attempt), set())
            for obj in sorted(set(a.heads) & set(a.switched)):
                if obj not in released and s not in self.problems:
                    self.problems[s] = (f"head {obj} switched for R{a.j} (attempt {a.attempt}) before its control "
                                     "message was delivered")


def commit_rule_violations(executor: Any) -> dict[int, str]:
    """Jobs whose last commit broke Fries §7.3, in words: a job is committed while its request
    has a head without its FCM (no checkpoint between a request and the moment every head has
    it), or while a user's request is in progress (it blocks commits until done, so a failing
    transformation rolls back to a state before it). The committed view is a snapshot of the
    driver's bookkeeping, so its ``active`` request is what the commit covered. Batch-wise
    commits are consistent cuts either way, so no output or state oracle sees such a commit
    unless the job crashes right then."""
    found: dict[int, str] = {}
    for s, st in enumerate(executor.state):
        c = st.committed.active
        if c is None:
            continue
        missing = sorted(set(c.heads) - set(c.switched))
        if c.user or missing:
            why = "a user's request was still in progress" if c.user else f"heads {missing} had no FCM yet"
            found[s] = f"job committed during R{c.j} (attempt {c.attempt}) while {why} (Fries §7.3)"
    return found


class CommitWatch:
    """Checks after every batch that each job's committed view (what a crash or a restarted
    driver resumes from) is only ever replaced by a commit: it either holds the same history
    and is unchanged, or its history grew (a commit) - and that the commit obeyed Fries §7.3
    (:func:`commit_rule_violations`). A committed view that changes between commits (e.g. the
    driver's live bookkeeping aliasing the committed record after a crash, so every batch
    writes its uncommitted offset and pending batches into it) is invisible to the oracles
    until a second crash falls before the next commit; this sees it in the first batch."""

    def __init__(self) -> None:
        self.last: dict[int, Any] = {}

    def after_batch(self, executor: Any) -> dict[int, str]:
        """Problems by job (empty when every job's committed view is sound)."""
        found = commit_rule_violations(executor)
        for s, st in enumerate(executor.state):
            before, now = self.last.get(s), st.committed
            if before is not None and list(now.history) == list(before.history) and now != before and s not in found:
                changed = sorted(k for k in vars(now) if getattr(now, k) != getattr(before, k))
                found[s] = (f"the committed view of the job changed without a commit (fields {changed}; history "
                            f"{list(now.history)}): a crash would resume from uncommitted bookkeeping")
            self.last[s] = copy.deepcopy(now)
        return found


def run_stepped(spark: Any, scenarios: Sequence[Scenario], scheduler: str, *, faults: frozenset[str],
                checkpoint_dir: str) -> list[Any]:
    """Run ``scenarios`` with FCMs released batch by batch; one ``RunResult`` (delays dropped)
    or ``PathFailure`` per scenario."""
    executor = Executor(spark, [stepped_job(sc, s) for s, sc in enumerate(scenarios)], scheduler, checkpoint_dir,
                        faults=faults)
    releases = Releases()
    releases.drive(executor)
    return releases.results(collect_results(executor))
