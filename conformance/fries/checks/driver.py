"""The Fries driver's own promises, on a pure-Python Spark.

:class:`~conformance.standin.spark.LocalSpark` runs the executor's stages, task files, control
log and driver (:mod:`spark_impl.reconfig.driver`) in this process, so a check can act *inside*
a running batch (a task's processing cost goes through the task module's ``time.sleep``, here
a hook) and read the driver's bookkeeping after every batch. :func:`driver_problem` builds
executors on three parallelisms and runs four short jobs
(:func:`conformance.fries.checks.standin.chain_json`; about 0.2 s in all), and names the first
broken promise (wired into :mod:`conformance.fries.checks.contracts`):

* **Default partitions.** ``Executor(partitions=None)`` runs on
  ``max(1, sc.defaultParallelism)`` partitions (``self.partitions = partitions or max(1,
  int(self.sc.defaultParallelism))``): 2 on a context of parallelism 2, 5 on 5, 1 on 0, and an
  explicit ``partitions=3`` wins. Every Spark run passes ``partitions`` or gets Spark's own
  parallelism, where any rule that keeps a positive count conforms.
* **Submit at once, or at the next batch.** ``driver``'s docstring: ":meth:`Executor.submit`
  makes a request at once, even while a batch runs"; between batches it is queued and made by
  the next batch (``_plan``: "st.queued stays set until step() has made it"). A request
  submitted inside a running batch (from a task of job 0, while ``Executor.running``) must be
  made before ``submit`` returns: ``made`` grows by one, nothing is queued, and the active
  request's ``epoch_batch`` is the running batch's + 1 (``_make``); one submitted between
  batches leaves ``queued`` set to it and ``made`` unchanged until the next ``step`` makes it.
  A request made one batch late (or one made early) completes and conforms just the same, so
  the Spark runs (and ``fries_local_check``'s ``step_with_request``, accepted and completed)
  cannot tell.
* **User requests block commits until done.** The commit rule's comment: "Fries §7.3: no
  checkpoint until every head has its FCM (user requests: until done)", and
  ``stepped.commit_rule_violations``: a user's request "blocks commits until done, so a failing
  transformation rolls back to a state before it". The watchers read the executor's own
  ``Active.user``, which a driver that forgets the flag sets wrong consistently. Here the
  harness knows which requests it submitted (R1, R3, R4; R2 is planned): at the end of the
  batch that made a request its ``Active.user`` says whose it is, and after every batch no
  committed view holds a user's request active. Under the fries scheduler a request completes
  in the batch its last head switches, so the head rule alone already blocks those commits;
  under the epoch scheduler (no heads, the switch at the next batch) a planned request's batch
  commits at once, and a user's (submitted between batches) must not: the batch that made it
  stays uncommitted.
* **The reported delay.** ``RunResult.delays_ms``: "reconfiguration delay of each completed
  request in order (request -> last reconfigured object switched)", in milliseconds. The
  tasks' switch reports (kind ``STATS``: object, ``reconfigured`` flag, switch time) are
  captured as the driver absorbs them, with the active request's ``issued``; every completed
  request's delay must be (latest switch time of a reconfigured object - issued) * 1000. The
  requests update ``O1`` and ``O3`` on 2 workers each, so the reconfigured objects switch at
  different times and ``O3``'s are not heads. The Spark runs only bound a delay by the run's
  duration (``engines.delay_problem``); the earliest switch, the heads' last switch or a delay
  in seconds all fit in that bound.
* **Validation on the last commit.** ``validate``'s docstring: "the state transformation is
  dry-run on the operator's last committed state of every key". After three commits a request
  whose transformation raises only on a state ``O1`` reached after batch 1 must be rejected by
  ``submit`` at once. The Spark runs' invalid requests (``frontends.RaisingTransform``) raise on
  every state, so a dry run on any commit rejects them.
* **Rollback to the last commit.** ``validate``'s docstring: "A transformation that raises only
  in a task ... is caught at the switch: the job rolls back to its last commit and the request
  is rejected". A user's request whose transformation passes the dry run and raises only inside
  the tasks (a module flag set after ``submit`` returned; the tasks run in this process) is
  made after three commits: it must be rejected (``RunResult.rejected`` names it ``R1``), the
  job must finish, and its outputs and states conform to the scenario without it (every oracle
  of :mod:`conformance.fries.oracles`). The Spark rollback path submits its failing request as
  soon as the job has committed once (history ``[1]``), where the first and the last commit
  are the same batch: a rollback that reloads the first commit's state goes unseen there.
* **A resume never reuses a batch number that ran.** ``Executor``'s resume takes the next batch
  after both the last commit record and the last batch on the store (``max(last,
  self._last_batch_on_disk()) + 1``; its comment for the case without a commit: a resume "still
  never reuses a batch number that ran"). Batches 1 and 2 committed, batch 3 crashes before its
  commit (the ``before_commit`` seam): the resumed executor's next batch is 4, and the run
  finishes and conforms. The Spark resume paths resume after a batch that committed (or after a
  sink crash, past the commit record), where the record names the last batch on the store.
* **One request at a time, also against a planned one.** A user's ``submit`` from inside the
  batch that makes a planned request, before the driver made it, is refused as in progress and
  the planned request completes (:func:`_planned_race_problem`; a real bug had the user's
  request made and then overwritten: lost). The Spark runs never submit while a planned
  request is being made (their jobs' requests are either all planned or all submitted).
* **The epoch switch after a restart.** An epoch job restarted in the batch of its switch runs
  that batch again under a later number: its objects must switch then
  (:func:`_epoch_restart_problem`; ``plan.g >= entry.epoch_batch`` -> ``==``
  or ``<=`` hangs the Spark run).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, replace
from typing import Any, Callable

from spec.fries.scenario import scenario_from_json

from conformance.fries.checks.chains import chain_json, conformance_problem
from conformance.fries.checks.standin import SleepRecorder
from conformance.standin.spark import LocalSpark

#: Batches a run may take (each needs at most about 12).
BOUND = 40
#: Source tuples of the job with four requests (4 a batch).
TUPLES = 32
#: What the failing transformation raises inside a task.
FAILURE = "streamproof-conformance: a state transformation that fails only inside a task"

_armed = threading.Event()  # set: _fails_in_tasks raises (the tasks run in this process)


def _fails_in_tasks(state: Any) -> Any:
    """A state transformation that is the identity until :data:`_armed` is set (the driver's
    dry run at ``submit``), then raises (the switch inside a task). Pickled by reference."""
    if _armed.is_set():
        raise RuntimeError(FAILURE)
    return state


@dataclass(frozen=True)
class _RaisesOn:
    """A state transformation that raises on the given states and is the identity elsewhere."""

    states: frozenset[Any]

    def __call__(self, state: Any) -> Any:
        if state in self.states:
            raise ValueError(f"state {state} was reached after batch 1")
        return state


def driver_problem() -> str | None:
    """Run the jobs of the module docstring; the first broken promise (one line), or None."""
    directory = tempfile.mkdtemp(prefix="streamproof-driver-")
    try:
        return (_partitions_problem(os.path.join(directory, "partitions"))
                or _requests_problem(os.path.join(directory, "requests"))
                or _epoch_user_problem(os.path.join(directory, "epoch"))
                or _rollback_problem(os.path.join(directory, "rollback"))
                or _resume_problem(os.path.join(directory, "resume"))
                or _planned_race_problem(os.path.join(directory, "race"))
                or _epoch_restart_problem(os.path.join(directory, "epoch-restart")))
    except Exception as error:  # noqa: BLE001 - a crash of the executor's code is a finding
        return f"the driver checks raised {type(error).__name__}: {error}"
    finally:
        shutil.rmtree(directory, ignore_errors=True)


# --- small parts --------------------------------------------------------------------------


def _scenario(shape: dict[str, Any], name: str) -> Any:
    return scenario_from_json(shape, name)


def _executor(directory: str, job: Any, **options: Any) -> Any:
    from spark_impl.reconfig.driver import Executor

    return Executor(LocalSpark(), [job], "fries", directory, partitions=2, **options)


def _finish(ex: Any, name: str, after_batch: Callable[[], str | None] = lambda: None) -> str | None:
    """Step ``ex`` until done (at most :data:`BOUND` batches), ``after_batch`` after each."""
    for _ in range(BOUND):
        if ex.done():
            return None
        ex.step()
        found = after_batch()
        if found is not None:
            return found
    return None if ex.done() else f"{name} did not finish in {BOUND} batches"


def _conforms(name: str, scenario: Any, result: Any, rejected: Any = ()) -> str | None:
    """Every oracle on ``result`` (``rejected``: the messages naming the rejected requests)."""
    return conformance_problem(name, scenario, result, rejected)


def _o1_states(ex: Any) -> set[Any]:
    from spark_impl.reconfig.api import collect_results

    return {value for (op, _), value in collect_results(ex)[0].states.items() if op == "O1"}


# --- default partitions -------------------------------------------------------------------


def _partitions_problem(directory: str) -> str | None:
    """``Executor``'s partition count without and with ``partitions`` (module docstring)."""
    from spark_impl.reconfig.api import scenario_job
    from spark_impl.reconfig.driver import Executor

    job = scenario_job(_scenario(chain_json(2, 4, at=2), "partitions"))
    for parallelism, explicit, want in ((2, None, 2), (5, None, 5), (0, None, 1), (2, 3, 3)):
        where = os.path.join(directory, f"{parallelism}-{explicit}")
        got = Executor(LocalSpark(parallelism), [job], "fries", where, partitions=explicit).partitions
        if got != want:
            given = "no partitions argument" if explicit is None else f"partitions={explicit}"
            return (f"Executor on a context of defaultParallelism {parallelism} with {given} runs on {got} "
                    f"partitions, not {want} (partitions or max(1, defaultParallelism))")
    return None


# --- requests: submit, user flags, delays -------------------------------------------------


class _Absorbed:
    """Wraps an executor's ``_absorb`` (job 0): keeps the tasks' switch reports of the active
    request (the switch times of reconfigured objects) and its ``issued``, and names a request
    whose ``Active.user`` disagrees with who made it, at the end of the batch that made it."""

    def __init__(self, ex: Any, users: set[int]) -> None:
        self.ex, self.users = ex, users
        self.absorb = ex._absorb
        self.times: dict[int, list[float]] = {}
        self.issued: dict[int, float] = {}
        self.problem: str | None = None
        ex._absorb = self

    def __call__(self, plan: Any, stats: list[Any]) -> None:
        a = self.ex.state[0].live.active
        if a is not None:
            self.issued[a.j] = a.issued
            user = a.j in self.users
            if a.user != user and self.problem is None:
                self.problem = (f"R{a.j}, {'a user' if user else 'a planned'} request, was made with "
                                f"Active.user {a.user}: user requests (only they) block commits until done")
            self.times.setdefault(a.j, []).extend(
                float(rec[8]) for rec in stats
                if rec[1] == 0 and rec[4] == a.j and int(rec[5]) == a.attempt and rec[6] == "switch" and rec[7])
        self.absorb(plan, stats)

    def delays_ms(self) -> dict[int, float]:
        """Every request's delay recomputed from the reports (module docstring)."""
        return {j: (max(times) - self.issued[j]) * 1000.0 for j, times in self.times.items() if times}


class _SubmitInTask(SleepRecorder):
    """The task module's ``time`` during :func:`_requests_problem`: a task's processing cost
    (``time.sleep``) submits ``request`` for job 0 once R2 has completed, from inside the
    running batch, and keeps what the driver answered and showed right after."""

    def __init__(self, ex: Any, request: Any) -> None:
        super().__init__()
        self.ex, self.request = ex, request
        self.seen: dict[str, Any] | None = None

    def sleep(self, seconds: float) -> None:
        ex = self.ex
        with ex.lock:
            live = ex.state[0].live
            if self.seen is not None or live.made != 2 or live.active is not None or ex.state[0].queued is not None:
                return
            answer = ex.submit(0, self.request)
            a = ex.state[0].live.active
            self.seen = {"answer": answer, "made": ex.state[0].live.made, "queued": ex.state[0].queued,
                         "active": None if a is None else (a.j, a.epoch_batch), "g": ex.g, "running": ex.running}


def _requests_problem(directory: str) -> str | None:
    """R1 submitted before the run (queued), R2 planned, R3 submitted from a running task, R4
    submitted between batches; every request updates ``O1`` and ``O3`` (module docstring)."""
    from spark_impl.reconfig import task
    from spark_impl.reconfig.api import collect_results, scenario_job

    shape = chain_json(3, TUPLES, at=4)
    update = shape["reconfigurations"][0]
    update["updates"]["O3"] = {"function": {"op": "fold", "mul": 7}, "state": {"mul": 1, "add": 2}}
    # only R2 is made by the driver; R1, R3, R4 come through submit before their ``at``
    shape["reconfigurations"] = [dict(update, at=at) for at in (4, 8, TUPLES, TUPLES)]
    shape["parallelism"] = {"O1": 2, "O3": 2}
    shape["timing"] = {"operator_cost": {"O1": 0.001}}  # the tasks call time.sleep: the hook
    scenario = _scenario(shape, "requests")
    job = scenario_job(scenario)
    requests = [p.request for p in job.planned]
    ex = _executor(directory, job)
    absorbed = _Absorbed(ex, {1, 3, 4})
    hook = _SubmitInTask(ex, requests[2])
    found = _idle_submit(ex, requests[0], 1)
    if found is not None:
        return found
    state = {"queued": 1, "submitted4": False}

    def after_batch() -> str | None:
        st = ex.state[0]
        if state["queued"]:
            j, state["queued"] = state["queued"], 0
            if st.live.made != j or st.queued is not None:
                return (f"R{j}, submitted between batches, was not made by the next batch (made {st.live.made}, "
                        f"queued {st.queued is not None}): a queued request is made when the next batch runs")
        if absorbed.problem is not None:
            return absorbed.problem
        c = st.committed.active
        if c is not None and c.j in absorbed.users:
            return (f"batch {ex.g - 1} committed the job while R{c.j}, a user's request, was in progress: user "
                    "requests block commits until done (a failing transformation rolls back before them)")
        if hook.seen is not None and st.live.made == 3 and st.live.active is None and not state["submitted4"]:
            state["submitted4"], state["queued"] = True, 4
            return _idle_submit(ex, requests[3], 4)
        return None

    real = getattr(task, "time")
    setattr(task, "time", hook)  # noqa: B010 - the task module's own name for the module
    try:
        found = _finish(ex, "the job with four requests", after_batch)
    finally:
        setattr(task, "time", real)  # noqa: B010
    if found is not None:
        return found
    found = _in_task_problem(hook.seen)
    if found is not None:
        return found
    if not state["submitted4"] or ex.state[0].live.made != 4:
        return f"set-up: the job made {ex.state[0].live.made} requests, not 4 (R4 submitted: {state['submitted4']})"
    result = collect_results(ex)[0]
    want = absorbed.delays_ms()
    recomputed = tuple(want[j] for j in sorted(want))
    if len(result.delays_ms) != 4 or any(abs(a - b) > 1e-6 for a, b in zip(result.delays_ms, recomputed)):
        return (f"reported delays {[round(d, 3) for d in result.delays_ms]} ms; the tasks' switch reports give "
                f"{[round(d, 3) for d in recomputed]} ms: a delay runs from the request to the last reconfigured "
                "object's switch, in ms (RunResult.delays_ms)")
    return _conforms("the job with four requests", scenario, result)


def _epoch_user_problem(directory: str) -> str | None:
    """A user's request under the epoch scheduler (no heads: a planned request's batch commits
    at once) blocks the commit of the batch that made it (module docstring)."""
    from spark_impl.reconfig.api import collect_results, scenario_job
    from spark_impl.reconfig.driver import Executor

    scenario = _scenario(chain_json(2, 12, at=4), "epoch user")
    job = scenario_job(scenario)
    ex = Executor(LocalSpark(), [replace(job, planned=())], "epoch", directory, partitions=2)
    ex.step()
    found = _idle_submit(ex, job.planned[0].request, 1)
    if found is not None:
        return f"epoch scheduler: {found}"
    ex.step()  # makes R1; the epoch scheduler switches it at the next batch
    st = ex.state[0]
    if st.live.active is None or st.live.active.j != 1:
        return ("set-up: under the epoch scheduler R1 was not in progress after the batch that made it "
                f"({st.live.active})")
    if st.committed.active is not None or st.committed.history != [1]:
        return (f"epoch scheduler: batch {ex.g - 1} was committed (history {st.committed.history}) while R1, a user's "
                "request, was in progress: user requests block commits until done")
    return _finish(ex, "the epoch job with a user's request") or _conforms(
        "the epoch job with a user's request", scenario, collect_results(ex)[0])


def _idle_submit(ex: Any, request: Any, j: int) -> str | None:
    """Submit ``request`` (to become R``j``) between batches: accepted and queued, not made."""
    st = ex.state[0]
    made = st.live.made
    answer = ex.submit(0, request)
    if answer is not None:
        return f"R{j}, submitted between batches, was rejected: {answer}"
    if st.queued is not request or st.live.made != made or st.live.active is not None:
        return (f"R{j}, submitted between batches, was made at once (made {made} -> {st.live.made}, queued "
                f"{st.queued is not None}): between batches a request is queued for the next batch")
    return None


def _in_task_problem(seen: dict[str, Any] | None) -> str | None:
    """What the driver showed right after R3 was submitted from inside a running batch."""
    if seen is None or not seen["running"]:
        return f"set-up: R3 was never submitted from inside a running batch ({seen})"
    if seen["answer"] is not None:
        return f"R3, submitted while batch {seen['g']} ran, was rejected: {seen['answer']}"
    if seen["made"] != 3 or seen["queued"] is not None or seen["active"] != (3, seen["g"] + 1):
        return (f"R3, submitted while batch {seen['g']} ran, was not made at once (made {seen['made']}, queued "
                f"{seen['queued'] is not None}, active (j, epoch_batch) {seen['active']}, expected (3, "
                f"{seen['g'] + 1})): Executor.submit makes a request at once, even while a batch runs")
    return None


# --- validation and rollback --------------------------------------------------------------


def _rollback_problem(directory: str) -> str | None:
    """Three commits, then a request rejected by the dry run on the last commit, then one that
    fails inside the tasks and rolls the job back (module docstring)."""
    from spark_impl.reconfig.api import collect_results, scenario_job
    from spark_impl.reconfig.model import Request, Update

    scenario = _scenario(chain_json(2, 24, at=12), "rollback")
    job = replace(scenario_job(scenario), planned=())
    ex = _executor(directory, job)
    first: set[Any] = set()
    for batch in range(3):
        ex.step()
        first = first or _o1_states(ex)
    history = list(ex.state[0].committed.history)
    later = frozenset(_o1_states(ex) - first)
    if history != [1, 2, 3] or not later:
        return f"set-up: after three batches the job committed {history}, O1 reached new states {sorted(later)}"
    logic = job.logic["O1"]
    answer = ex.submit(0, Request({"O1": Update(logic, _RaisesOn(later))}))
    if answer is None or "state transformation of 'O1' raised" not in answer:
        return (f"a request whose transformation raises on states O1 reached after batch 1 (committed {history}) "
                f"was answered {answer!r} by submit: the dry run uses the last committed state of every key")
    answer = ex.submit(0, Request({"O1": Update(logic, _fails_in_tasks)}))
    if answer is not None:
        return f"set-up: a transformation that raises only inside tasks was rejected by submit: {answer}"
    _armed.set()
    try:
        found = _finish(ex, "the job whose request failed inside a task")
    finally:
        _armed.clear()
    if found is not None:
        return found
    result = collect_results(ex)[0]
    failed = [m for m in result.rejected if FAILURE in m]
    if len(result.rejected) != 2 or len(failed) != 1 or not failed[0].startswith("R1 "):
        return (f"a user's request whose transformation raised inside a task (after commits {history}) was not "
                f"rejected as R1: RunResult.rejected {list(result.rejected)}")
    return _conforms(f"the job rolled back after commits {history}", scenario, result, failed)


# --- resume after a crash -----------------------------------------------------------------


class _Crash(Exception):
    """The driver crash of :func:`_resume_problem`."""


def _resume_problem(directory: str) -> str | None:
    """Batches 1 and 2 committed, batch 3 crashes before its commit, then a resume."""
    from spark_impl.reconfig.api import collect_results, scenario_job

    scenario = _scenario(chain_json(2, 16, at=10), "resume")
    crashed = _executor(directory, scenario_job(scenario))

    def crash(plan: Any) -> None:
        if plan.g == 3:
            raise _Crash(f"crash before the commit of batch {plan.g}")

    crashed.before_commit = crash
    try:
        for _ in range(3):
            crashed.step()
        return "a batch whose commit crashed returned from Executor.step"
    except _Crash:
        pass
    history = list(crashed.state[0].committed.history)
    if history != [1, 2]:
        return f"set-up: the job committed {history} before batch 3 crashed, not [1, 2]"
    ex = _executor(directory, scenario_job(scenario), resume=True)
    if ex.g != 4:
        return (f"resumed after batch 3 crashed before its commit (batches 1, 2 committed), the next batch is "
                f"{ex.g}, not 4: a resume never reuses a batch number that ran")
    found = _finish(ex, "the job resumed after a crash")
    return found or _conforms("the job resumed after a crash", scenario, collect_results(ex)[0])


# --- a user's submit while a batch makes a planned request ---------------------------------


class _SubmitWhileMaking(SleepRecorder):
    """The task module's ``time`` during :func:`_planned_race_problem`: the first processing
    cost of batch 1 (the batch that makes the planned R1) submits ``request`` from inside the
    running batch, before the driver made R1, and keeps the answer."""

    def __init__(self, ex: Any, request: Any) -> None:
        super().__init__()
        self.ex, self.request = ex, request
        self.answers: list[str | None] = []

    def sleep(self, seconds: float) -> None:
        if not self.answers and self.ex.g == 1 and self.ex.state[0].live.made == 0:
            self.answers.append(self.ex.submit(0, self.request))


def _planned_race_problem(directory: str) -> str | None:
    """One request at a time (Fries §2.2; ``submit``'s docstring: "None if accepted, else the
    rejection message"): the batch that reaches a planned request's ``at`` makes it once its
    first tasks started (``step`` waits for them), so a user's ``submit`` in between finds no
    active request. It must be refused as in progress, and the planned request completes:
    a real bug (fixed) accepted it and made it as R1, then overwritten by the planned request made
    as R2 - the user's request silently lost (never applied, never rejected, no delay)."""
    from spark_impl.reconfig import task
    from spark_impl.reconfig.api import collect_results, scenario_job

    shape = chain_json(2, 12, at=4)
    shape["timing"] = {"operator_cost": {"O1": 0.001}}  # the tasks call time.sleep: the hook
    scenario = _scenario(shape, "planned race")
    job = scenario_job(scenario)
    ex = _executor(directory, job)
    hook = _SubmitWhileMaking(ex, job.planned[0].request)
    real = getattr(task, "time")
    setattr(task, "time", hook)  # noqa: B010 - the task module's own name for the module
    try:
        ex.step()
    finally:
        setattr(task, "time", real)  # noqa: B010
    if not hook.answers:
        return "set-up: no task of batch 1 ran before the driver made the planned R1"
    if hook.answers[0] is None or "in progress" not in hook.answers[0]:
        return (f"a user's request submitted while batch 1 was making the planned R1 was answered "
                f"{hook.answers[0]!r}: one request at a time, it must be refused as in progress (else it is made and "
                "then overwritten by the planned request: lost)")
    found = _finish(ex, "the job with a planned request and a refused user's request")
    result = collect_results(ex)[0]
    return found or _conforms("the job with a planned request and a refused user's request", scenario, result)


# --- the epoch switch after a restart --------------------------------------------------------


def _epoch_restart_problem(directory: str) -> str | None:
    """Under the epoch scheduler an object switches in the first batch at or after the
    request's ``epoch_batch`` it runs (``task``: ``plan.g >= entry.epoch_batch``). A job whose
    restart (``timing.restarts``, "the batch ... runs, then the job crashes before its commit
    and recovers from its last commit") falls in the switch batch runs that batch again under a
    new number, past ``epoch_batch``: the switch must happen then, the job finish and conform.
    With ``>=`` -> ``==`` or ``<=`` the objects never switch again after the restart (the
    request never completes; on Spark the suite runs batches until its time limit, the local
    check's epoch job has no restart)."""
    from spark_impl.reconfig.api import collect_results, scenario_job
    from spark_impl.reconfig.driver import Executor

    scenario = _scenario(chain_json(2, 16, at=4, restarts=(8,)), "epoch restart")
    ex = Executor(LocalSpark(), [scenario_job(scenario)], "epoch", directory, partitions=2)
    name = "an epoch job restarted in the batch of its switch (request at 4 tuples, restart at 8)"
    found = _finish(ex, name)
    if found is not None:
        return f"{found}: after the restart the switch batch runs again under a new number, past epoch_batch"
    return _conforms(name, scenario, collect_results(ex)[0])
