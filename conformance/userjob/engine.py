"""Running a batch of user-job cases: the reference first, then every case in one Spark run.

For each case the reference serial run (:func:`reference.fries.userjob.serial_run` in request
order) runs first, in this process, under a time limit: the user's code meets every tuple of
the case there, so an exception or a hang in it is found and named *before* Spark sees the
case (the case then fails with oracle ``user-code`` and is not run on Spark). What the user's
code printed is kept per case. The remaining cases of the batch run together in one
:class:`~spark_impl.reconfig.Executor` (one job per case, the same Spark jobs), under
:class:`conformance.core.crashes.Guard`: a batch that raises is bisected to the cases that crash it,
a batch that never finishes is a liveness failure. A user exception raised only on Spark (the
run's order differs from the serial one) is recognised in Spark's error text and reported as
the user's.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, Sequence

from spec.errors import InputError, cut

from reference.fries.userjob import request_order, serial_run

from spark_impl.keys import key_order, route
from spark_impl.reconfig.model import Job

from conformance.core.crashes import Crash, Guard
from conformance.core.protocols import Engine
from conformance.core.session import conformance_session
from conformance.core.spark_logs import adopt
from conformance.core.watchdog import call_with_timeout, stop_thread
from conformance.userjob.cases import Case, case_job
from conformance.userjob.guard import UserCodeError, captured_output, current_call, user_error_in
from conformance.userjob.judge import UserRun
from conformance.userjob.load import JobUnderTest
from spark_impl.reconfig import Executor, collect_results


def user_route(key: Any, workers: int) -> int:
    """:func:`spark_impl.keys.route`, with a key it cannot route (an unsupported type, a
    ``Decimal`` NaN, a ``str`` subclass whose ``__len__`` raises) reported as the user's fault
    (:class:`UserCodeError`, oracle ``user-code``): the keys are the job's."""
    try:
        return route(key, workers)
    except Exception as error:  # noqa: BLE001 - the user's key, whatever its methods raise
        try:
            shown = cut(repr(key), 120)
        except Exception:  # noqa: BLE001 - its __repr__ raises too
            shown = f"<{type(key).__name__}>"
        try:
            said = f"{type(error).__name__}: {error}"
        except Exception:  # noqa: BLE001
            said = type(error).__name__
        raise UserCodeError(cut(f"the job's key {shown} cannot be routed: {said}", 600).replace("\n", " ")) from None


@dataclass(frozen=True)
class CaseRun:
    """One case's run and what the job printed during its reference run."""

    job: Job | None
    run: UserRun
    printed: str = ""


@dataclass
class UserJobEngine:
    """Runs cases of one user job on Spark (module docstring). ``timeout_s`` bounds a Spark
    batch, ``call_limit_s`` the reference run of one case."""

    under: JobUnderTest
    scheduler: str = "fries"
    faults: frozenset[str] = frozenset()
    session: Any = None
    timeout_s: float = 900.0
    call_limit_s: float = 60.0
    hung: str | None = None

    @property
    def spark(self) -> Any:
        """The shared SparkSession (created on first use)."""
        self.session = self.session or conformance_session("streamproof-userjob")
        return adopt(self.session)

    def __call__(self, cases: Sequence[Case]) -> list[CaseRun]:
        """:meth:`run` (the :class:`~conformance.core.protocols.Engine` call)."""
        return self.run(cases)

    def run(self, cases: Sequence[Case]) -> list[CaseRun]:
        """Every case of the batch: reference check, then one Spark run of the rest."""
        runs: list[CaseRun | None] = []
        jobs: list[tuple[int, Job, str]] = []
        for index, case in enumerate(cases):
            checked = self._reference(case)
            runs.append(checked if checked.run.error is not None else None)
            if checked.job is not None and checked.run.error is None:
                jobs.append((index, checked.job, checked.printed))
        if jobs:
            guard: Guard[Job, UserRun] = Guard(self._spark_batch, self.timeout_s,
                                               on_hang=lambda: self.spark.sparkContext.cancelAllJobs())
            if self.hung is not None:
                guard.hung = self.hung
            results = guard([job for _, job, _ in jobs])
            self.hung = guard.hung
            for (index, job, printed), result in zip(jobs, results):
                run = UserRun(error=result.explain()) if isinstance(result, Crash) else result
                runs[index] = CaseRun(job, run, printed)
        return [r if r is not None else CaseRun(None, UserRun(error="not run")) for r in runs]

    def _reference(self, case: Case) -> CaseRun:
        """Build the case's job and run the reference on it under the time limit."""
        captured_output()
        try:
            job = case_job(self.under, case)
        except UserCodeError as error:
            return CaseRun(None, UserRun(error=f"UserCodeError: {error}"), captured_output())
        box: dict[str, int] = {}

        def reference() -> None:
            box["thread"] = threading.get_ident()
            serial_run(job, request_order(job), user_route, flush_order=key_order)

        try:
            finished, _ = call_with_timeout(reference, self.call_limit_s)
        except UserCodeError as error:
            return CaseRun(job, UserRun(error=f"UserCodeError: {error}"), captured_output())
        except InputError as error:  # e.g. a blocking operator's keys cannot be sorted
            return CaseRun(job, UserRun(error=f"UserCodeError: the job {error}"), captured_output())
        if not finished:
            call = current_call(box.get("thread", -1)) or "the job's code"
            hung = next((t for t in threading.enumerate() if t.ident == box.get("thread")), None)
            if hung is not None:
                stop_thread(hung)  # a user's endless loop would slow every later case (conformance.core.watchdog)
            return CaseRun(job, UserRun(error=f"UserCodeError: {call} did not return within "
                                              f"{self.call_limit_s:.0f} s (a hang in the job's code; the "
                                              "reference run of this case was abandoned)"), captured_output())
        return CaseRun(job, UserRun(), captured_output())

    def _spark_batch(self, jobs: Sequence[Job]) -> list[UserRun]:
        scratch = tempfile.mkdtemp(prefix="streamproof-userjob-")
        try:
            executor = Executor(self.spark, list(jobs), self.scheduler, scratch, faults=self.faults)
            try:
                executor.run()
            except Exception as error:  # noqa: BLE001 - the user's exception inside Spark's
                user = user_error_in(str(error))
                if user is not None:
                    raise UserCodeError(user) from None
                raise
            results = collect_results(executor)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return [UserRun(r.outputs, r.schedule, r.states, r.rejected, r.senders) for r in results]


IS_AN_ENGINE: type[Engine[Case, CaseRun]] = UserJobEngine
"""mypy checks here that :class:`UserJobEngine` is an :class:`~conformance.core.protocols.Engine`."""
