"""The Fries driver's own promises (:mod:`spark_impl.reconfig.driver`'s docstrings), on the
pure-Python Spark stand-in (:class:`conformance.standin.spark.LocalSpark`), which runs the
executor's stages, task files, control log and driver in this process: a test acts *inside* a
running batch (a task's processing cost goes through the task module's ``time.sleep``, here a
hook) and reads the driver's bookkeeping after every batch. No run's outputs show these
promises: a request made one batch late, a delay in seconds or a rollback to the first commit
all give runs that conform.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import pytest

from spec.fries.scenario import scenario_from_json
from support.fries_chains import BOUND, SleepRecorder, chain_json, conformance_problem

from conformance.standin.spark import LocalSpark
from spark_impl.reconfig import task
from spark_impl.reconfig.api import collect_results, scenario_job
from spark_impl.reconfig.driver import Executor
from spark_impl.reconfig.model import Request, Update
from spark_impl.reconfig.task import started_name

TUPLES = 32
"""Source tuples of the job with four requests (4 a batch)."""

FAILURE = "a state transformation that fails only inside a task"
"""What :class:`FailsInTasks` raises inside a task."""


class FailsInTasks:
    """A state transformation that is the identity until :attr:`armed` is set (the driver's
    dry run at ``submit``), then raises (the switch inside a task; the tasks run in this
    process). Pickled by reference to its class, the event shared through the class."""

    armed = threading.Event()

    def __call__(self, state: Any) -> Any:
        if self.armed.is_set():
            raise RuntimeError(FAILURE)
        return state


@dataclass(frozen=True)
class RaisesOn:
    """A state transformation that raises on the given states and is the identity elsewhere."""

    states: frozenset[Any]

    def __call__(self, state: Any) -> Any:
        if state in self.states:
            raise ValueError(f"state {state} was reached after batch 1")
        return state


def executor(directory: Path, job: Any, scheduler: str = "fries", **options: Any) -> Executor:
    return Executor(LocalSpark(), [job], scheduler, str(directory), partitions=2, **options)


def finish(ex: Executor, after_batch: Callable[[], None] = lambda: None) -> None:
    """Step ``ex`` until done (at most :data:`BOUND` batches), ``after_batch`` after each."""
    for _ in range(BOUND):
        if ex.done():
            return
        ex.step()
        after_batch()
    assert ex.done(), f"the job did not finish in {BOUND} batches"


def o1_states(ex: Executor) -> set[Any]:
    return {value for (op, _), value in collect_results(ex)[0].states.items() if op == "O1"}


def submit_between_batches(ex: Executor, request: Any, j: int) -> None:
    """``submit``'s docstring: between batches a request is accepted and queued for the next
    batch (``_plan``: "st.queued stays set until step() has made it"), not made at once."""
    st = ex.state[0]
    made = st.live.made
    assert ex.submit(0, request) is None, f"R{j}, submitted between batches, was rejected"
    assert st.queued is request and st.live.made == made and st.live.active is None, (
        f"R{j}, submitted between batches, was made at once (made {made} -> {st.live.made})")


@pytest.mark.parametrize("parallelism, explicit, want", [(2, None, 2), (5, None, 5), (0, None, 1), (2, 3, 3)])
def test_the_default_partitions_are_the_contexts_parallelism_at_least_one(
        tmp_path: Path, parallelism: int, explicit: int | None, want: int) -> None:
    """``Executor(partitions=None)`` runs on ``max(1, sc.defaultParallelism)`` partitions; an
    explicit count wins."""
    job = scenario_job(scenario_from_json(chain_json(2, 4, at=2), "partitions"))
    ex = Executor(LocalSpark(parallelism), [job], "fries", str(tmp_path), partitions=explicit)
    assert ex.partitions == want


class Absorbed:
    """Wraps an executor's absorption of a batch's reports (job 0): keeps the tasks' switch
    reports of the active request (the switch times of reconfigured objects) and its
    ``issued``, and the ``Active.user`` each request was made with."""

    def __init__(self, ex: Executor) -> None:
        self.ex, self.absorb = ex, ex._absorb
        self.times: dict[int, list[float]] = {}
        self.issued: dict[int, float] = {}
        self.user: dict[int, bool] = {}

    def __call__(self, plan: Any, stats: list[Any]) -> None:
        a = self.ex.state[0].live.active
        if a is not None:
            self.issued[a.j] = a.issued
            self.user.setdefault(a.j, a.user)
            self.times.setdefault(a.j, []).extend(
                float(rec[8]) for rec in stats
                if rec[1] == 0 and rec[4] == a.j and int(rec[5]) == a.attempt and rec[6] == "switch" and rec[7])
        self.absorb(plan, stats)

    def delays_ms(self) -> tuple[float, ...]:
        """Every request's delay recomputed from the reports: the last reconfigured object's
        switch minus ``issued``, in ms."""
        return tuple((max(self.times[j]) - self.issued[j]) * 1000.0 for j in sorted(self.times) if self.times[j])


class SubmitInTask(SleepRecorder):
    """The task module's ``time``: a task's processing cost (``time.sleep``) submits
    ``request`` for job 0 once R2 has completed, from inside the running batch, and keeps what
    the driver answered and showed right after."""

    def __init__(self, ex: Executor, request: Any) -> None:
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


@pytest.fixture(scope="module")
def four_requests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A job whose R1 is submitted before the run (queued), R2 planned, R3 submitted from a
    running task, R4 submitted between batches; every request updates ``O1`` and ``O3`` on 2
    workers each (so reconfigured objects switch at different times and ``O3``'s are not heads).
    What the driver showed along the way, for the tests below."""
    shape = chain_json(3, TUPLES, at=4)
    update = shape["reconfigurations"][0]
    update["updates"]["O3"] = {"function": {"op": "fold", "mul": 7}, "state": {"mul": 1, "add": 2}}
    shape["reconfigurations"] = [dict(update, at=at) for at in (4, 8, TUPLES, TUPLES)]
    shape["parallelism"] = {"O1": 2, "O3": 2}
    shape["timing"] = {"operator_cost": {"O1": 0.001}}  # the tasks call time.sleep: the hook
    scenario = scenario_from_json(shape, "requests")
    job = scenario_job(scenario)
    requests = [p.request for p in job.planned]
    ex = executor(tmp_path_factory.mktemp("requests"), job)
    absorbed = Absorbed(ex)
    ex._absorb = absorbed  # type: ignore[method-assign]
    hook = SubmitInTask(ex, requests[2])
    submit_between_batches(ex, requests[0], 1)
    seen: dict[str, Any] = {"queued": [1], "made after queued": [], "committed while user": []}

    def after_batch() -> None:
        st = ex.state[0]
        if seen["queued"]:
            j = seen["queued"].pop()
            seen["made after queued"].append((j, st.live.made, st.queued is None))
        c = st.committed.active
        if c is not None and c.j in (1, 3, 4):
            seen["committed while user"].append((ex.g - 1, c.j))
        if hook.seen is not None and st.live.made == 3 and st.live.active is None and "R4" not in seen:
            seen["R4"] = True
            submit_between_batches(ex, requests[3], 4)
            seen["queued"].append(4)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(task, "time", hook)
        finish(ex, after_batch)
    return {"ex": ex, "scenario": scenario, "absorbed": absorbed, "in task": hook.seen, "seen": seen}


def test_a_request_submitted_between_batches_is_made_by_the_next_batch(four_requests: dict[str, Any]) -> None:
    """``driver``: between batches a request is queued and made by the next batch."""
    assert four_requests["seen"]["made after queued"] == [(1, 1, True), (4, 4, True)]


def test_submit_makes_a_request_at_once_even_while_a_batch_runs(four_requests: dict[str, Any]) -> None:
    """``driver``'s docstring: ":meth:`Executor.submit` makes a request at once, even while a
    batch runs": made before ``submit`` returns, nothing queued, and the active request's
    ``epoch_batch`` the running batch's + 1."""
    seen = four_requests["in task"]
    assert seen is not None and seen["running"], "R3 was never submitted from inside a running batch"
    assert seen["answer"] is None
    assert (seen["made"], seen["queued"], seen["active"]) == (3, None, (3, seen["g"] + 1))


def test_only_user_requests_are_made_as_users_and_none_is_committed_while_in_progress(
        four_requests: dict[str, Any]) -> None:
    """The commit rule: "no checkpoint until every head has its FCM (user requests: until
    done)"; ``Active.user`` says whose a request is (R1, R3, R4 submitted, R2 planned)."""
    assert four_requests["absorbed"].user == {1: True, 2: False, 3: True, 4: True}
    assert four_requests["seen"]["committed while user"] == []


def test_the_reported_delay_runs_from_the_request_to_the_last_reconfigured_switch_in_ms(
        four_requests: dict[str, Any]) -> None:
    """``RunResult.delays_ms``: "reconfiguration delay of each completed request in order
    (request -> last reconfigured object switched)", in milliseconds."""
    result = collect_results(four_requests["ex"])[0]
    assert four_requests["ex"].state[0].live.made == 4
    assert result.delays_ms == pytest.approx(four_requests["absorbed"].delays_ms(), abs=1e-6)
    assert len(result.delays_ms) == 4


def test_the_job_with_four_requests_conforms(four_requests: dict[str, Any]) -> None:
    result = collect_results(four_requests["ex"])[0]
    assert conformance_problem("the job with four requests", four_requests["scenario"], result, ()) is None


def test_a_users_request_blocks_the_commit_under_the_epoch_scheduler(tmp_path: Path) -> None:
    """Under the epoch scheduler (no heads: a planned request's batch commits at once) a user's
    request blocks the commit of the batch that made it until done."""
    scenario = scenario_from_json(chain_json(2, 12, at=4), "epoch user")
    job = scenario_job(scenario)
    ex = executor(tmp_path, replace(job, planned=()), "epoch")
    ex.step()
    submit_between_batches(ex, job.planned[0].request, 1)
    ex.step()  # makes R1; the epoch scheduler switches it at the next batch
    st = ex.state[0]
    assert st.live.active is not None and st.live.active.j == 1
    assert st.committed.active is None and st.committed.history == [1], (
        f"batch {ex.g - 1} was committed while R1, a user's request, was in progress")
    finish(ex)
    assert conformance_problem("the epoch job with a user's request", scenario, collect_results(ex)[0], ()) is None


def test_validation_dry_runs_the_last_commit_and_a_failure_in_a_task_rolls_back_to_it(tmp_path: Path) -> None:
    """``validate``'s docstring: "the state transformation is dry-run on the operator's last
    committed state of every key"; "A transformation that raises only in a task ... is caught
    at the switch: the job rolls back to its last commit and the request is rejected". After
    three commits (so the first and the last commit differ)."""
    scenario = scenario_from_json(chain_json(2, 24, at=12), "rollback")
    job = replace(scenario_job(scenario), planned=())
    ex = executor(tmp_path, job)
    first: set[Any] = set()
    for _ in range(3):
        ex.step()
        first = first or o1_states(ex)
    history = list(ex.state[0].committed.history)
    later = frozenset(o1_states(ex) - first)
    assert history == [1, 2, 3] and later
    logic = job.logic["O1"]
    answer = ex.submit(0, Request({"O1": Update(logic, RaisesOn(later))}))
    assert answer is not None and "state transformation of 'O1' raised" in answer
    assert ex.submit(0, Request({"O1": Update(logic, FailsInTasks())})) is None
    FailsInTasks.armed.set()
    try:
        finish(ex)
    finally:
        FailsInTasks.armed.clear()
    result = collect_results(ex)[0]
    failed = [m for m in result.rejected if FAILURE in m]
    assert len(result.rejected) == 2 and len(failed) == 1 and failed[0].startswith("R1 "), result.rejected
    assert conformance_problem(f"the job rolled back after commits {history}", scenario, result, failed) is None


class Crash(Exception):
    """A driver crash before a commit (the ``before_commit`` seam)."""


def test_a_resume_never_reuses_a_batch_number_that_ran(tmp_path: Path) -> None:
    """``Executor``'s resume takes the next batch after both the last commit record and the
    last batch on the store: batches 1 and 2 committed, batch 3 crashed before its commit,
    the resumed executor's next batch is 4, and the run finishes and conforms."""
    scenario = scenario_from_json(chain_json(2, 16, at=10), "resume")
    crashed = executor(tmp_path, scenario_job(scenario))

    def crash(plan: Any) -> None:
        if plan.g == 3:
            raise Crash(f"crash before the commit of batch {plan.g}")

    crashed.before_commit = crash
    with pytest.raises(Crash):
        for _ in range(3):
            crashed.step()
    assert crashed.state[0].committed.history == [1, 2]
    ex = executor(tmp_path, scenario_job(scenario), resume=True)
    assert ex.g == 4
    finish(ex)
    assert conformance_problem("the job resumed after a crash", scenario, collect_results(ex)[0], ()) is None


class HeldStore:
    """The driver's store, except that batch 1's task-started markers stay invisible until
    :attr:`go` is set: the driver (``_wait_for_tasks``) makes batch 1's planned request only
    after the test's hook submitted from inside a task, whatever the machine's load."""

    def __init__(self, store: Any, partitions: int) -> None:
        self.store, self.go = store, threading.Event()
        self.held = {started_name(1, 1, part) for part in range(partitions)}

    def exists(self, name: str) -> bool:
        if name in self.held and not self.go.is_set():
            return False
        return bool(self.store.exists(name))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


class SubmitWhileMaking(SleepRecorder):
    """The task module's ``time``: the first processing cost of batch 1 (the batch that makes
    the planned R1) submits ``request`` from inside the running batch, before the driver made
    R1 (the driver is held until then), and keeps the answer."""

    def __init__(self, ex: Executor, request: Any, held: HeldStore) -> None:
        super().__init__()
        self.ex, self.request, self.held = ex, request, held
        self.answers: list[tuple[int, str | None]] = []

    def sleep(self, seconds: float) -> None:
        if not self.answers and self.ex.g == 1:
            self.answers.append((self.ex.state[0].live.made, self.ex.submit(0, self.request)))
            self.held.go.set()


def test_a_users_submit_while_a_batch_makes_a_planned_request_is_refused_as_in_progress(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One request at a time (Fries §2.2; ``submit``: "None if accepted, else the rejection
    message"): the batch that reaches a planned request's ``at`` makes it once its first tasks
    started, so a user's ``submit`` in between finds no active request; it must be refused as
    in progress and the planned request complete (else the user's request is made as R1, then
    overwritten by the planned one made as R2: lost, never applied nor rejected)."""
    shape = chain_json(2, 12, at=4)
    shape["timing"] = {"operator_cost": {"O1": 0.001}}  # the tasks call time.sleep: the hook
    scenario = scenario_from_json(shape, "planned race")
    job = scenario_job(scenario)
    ex = executor(tmp_path, job)
    held = HeldStore(ex.store, ex.partitions)
    ex.store = held
    hook = SubmitWhileMaking(ex, job.planned[0].request, held)
    monkeypatch.setattr(task, "time", hook)
    ex.step()
    ex.store = held.store
    assert hook.answers, "no task of batch 1 asked for its processing cost"
    made, answer = hook.answers[0]
    assert made == 0, "the driver made the planned R1 before the task's submit"
    assert answer is not None and "in progress" in answer
    finish(ex)
    result = collect_results(ex)[0]
    assert conformance_problem("the job with a planned request and a refused user's request", scenario, result, ()) is None


def test_an_epoch_job_restarted_in_its_switch_batch_switches_when_that_batch_runs_again(tmp_path: Path) -> None:
    """Under the epoch scheduler an object switches in the first batch at or after the
    request's ``epoch_batch`` it runs; ``timing.restarts``: "the batch ... runs, then the job
    crashes before its commit and recovers from its last commit". A restart in the switch
    batch runs it again under a later number: the objects must switch then, the job finish."""
    scenario = scenario_from_json(chain_json(2, 16, at=4, restarts=(8,)), "epoch restart")
    ex = executor(tmp_path, scenario_job(scenario), "epoch")
    finish(ex)
    assert conformance_problem("an epoch job restarted in its switch batch", scenario, collect_results(ex)[0], ()) is None
