"""The live harness's arrival and re-plan machinery (conformance.oplus.engines.live's silent
sources, conformance.dgs.engines.replan, conformance.dgs.engines.live's files), without Spark:

* an O+ list made silent sends nothing in its first files, the padded scenario (what the
  oracles judge) has the same sequential outputs, and its round watermarks stay below every
  event time while the list is silent - so a front end that lets a silent source drop out
  of the minimum is judged wrong;
* DGS re-plans are P-valid plans with disjoint worker ids, the ``processed`` oracle judges a
  new-plan worker against the new plan, and a restart with a malformed plan must be refused
  with an error located at the job;
* a one-tick DGS case with an odd seed arrives in several files.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence


from spec.errors import InputError
from spec.oplus.emission import emission_rounds, round_watermark
from spec.oplus.scenario import parse_scenario

from conformance.core.cases import draw_cases
from conformance.dgs.engines.replan import PREFIX, judged_processed, refused_restart, replan_of
from conformance.dgs.engines.live import FILES, case_chunks
from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.oracles import judge
from conformance.dgs.engines.reference import reference_engine
from conformance.dgs.cases import program_of
from conformance.oplus.cases import oplus_cases
from conformance.oplus.edges import with_edges
from conformance.oplus.oracles import sequential
from conformance.oplus.engines.live import LATE_EVERY, SILENT, late_arrivals, silent_prefix, silenced, stream_files
from reference.dgs.examples import target
from spark_impl.dgs.streaming import LiveJob, start_dgs_query
from spark_impl.dgs.topology import topology
from spec.dgs.plan import plan_from_json

OPLUS = with_edges(draw_cases(oplus_cases(), 60, 0), 0)


def test_silent_lists_send_nothing_in_their_first_files_and_the_rest_in_order() -> None:
    late = late_arrivals(OPLUS, 0)
    changed = [i for i, (a, b) in enumerate(zip(late, OPLUS)) if a is not b]
    assert changed == list(range(1, len(OPLUS), LATE_EVERY))
    files = stream_files(late)
    multi = 0
    for job in changed:
        case, k = late[job]
        silent = {s: silent_prefix(items) // k for s, items in enumerate(case["inputs"]) if silent_prefix(items)}
        assert silent and all(1 <= n <= 2 for n in silent.values())
        multi += len(case["inputs"]) > 1
        original = OPLUS[job][0]["inputs"]
        for source, items in enumerate(case["inputs"]):
            rows = [(f, r) for f, batch in enumerate(files) for r in batch if r["job"] == job and r["source"] == source]
            tuples = [(f, {n: v for n, v in r.items() if n not in ("job", "source", "seq")}) for f, r in rows
                      if "end" not in r]
            lead = silent.get(source, 0)
            assert [item for _, item in tuples] == original[source]  # nothing else landed, in order
            assert all(f >= lead for f, _ in rows)  # silent for its first `lead` files
            assert [f for f, r in rows if "end" in r] == [(len(items) - 1) // k if items else 0]
    assert multi >= 10  # the silent list has a sibling in most of them


def test_the_padded_scenario_is_the_live_arrival_same_outputs_and_windows_held_while_silent() -> None:
    held = 0
    for (padded, k), (original, _) in zip(late_arrivals(OPLUS, 0), OPLUS):
        if padded is original:
            continue
        scenario = parse_scenario(padded)
        assert sequential(scenario) == sequential(parse_scenario(original))
        emission_rounds(scenario, k, sequential)  # well formed: due rounds exist for every row
        lead = min(silent_prefix(items) for items in padded["inputs"] if silent_prefix(items)) // k
        stamps = [i["ts"] for items in original["inputs"] for i in items if "ts" in i]
        for r in range(lead):
            assert round_watermark(scenario, k, r) == SILENT < min(stamps, default=0)
        held += 1
    assert held >= 15


def test_a_front_end_that_ignores_a_silent_source_is_judged_wrong() -> None:
    """A silent source dropped from the minimum, on paper: list 1 (ts 1) silent in file 0, list 0 (ts 10, 20) sends; the
    correct watermark after file 0 is -inf (nothing due), the bug's is 10 (window [0, 5)
    due, then the tuple at 1 is late and lost)."""
    case = {"operator": "sliding-sum", "WA": 5, "WS": 5, "parallelism": 1,
            "inputs": [[{"ts": 10, "key": "a", "value": 1}, {"ts": 20, "key": "a", "value": 1}],
                       [{"ts": 1, "key": "a", "value": 7}]]}
    padded, k = silenced((case, 1), {1: 1})
    assert padded["inputs"][1][0] == {"watermark": SILENT}
    due = emission_rounds(parse_scenario(padded), k, sequential)
    window = next(row for row, _ in due if row[0] == 5)
    assert due[(window, 0)] == 0 and sum(n for (row, _), n in due.items() if row == window) == 1
    assert [f for f, rows in enumerate(stream_files([(padded, k)])) for r in rows if r["source"] == 1] == [1, 1]


DGS = draw_dgs_cases(60, 0)


def test_about_a_third_of_the_live_dgs_cases_replan_to_a_valid_plan_with_other_worker_ids() -> None:
    replans = [(case, replan_of(case, len(case_chunks(case)))) for case in DGS]
    chosen = [(c, r) for c, r in replans if r is not None]
    assert 12 <= len(chosen) <= 30
    assert Counter(r.restart_with_new for _, r in chosen).keys() == {True, False}
    for case, replan in chosen:
        topology(program_of(case.name), replan.plan)  # P-valid, else InputError
        new = {w.id for w in replan.plan.workers()}
        assert all(w.startswith(PREFIX) for w in new) and not new & {w.id for w in case.plan.workers()}
        assert 1 <= replan.before < len(case_chunks(case))
        assert replan == replan_of(case, len(case_chunks(case)))  # a function of the case: replays alike


def _processed_under(case: Any, plan: Any) -> list[Any]:
    """The reference's processed events of ``case`` with each renamed to ``plan``'s responsible worker."""
    _, _, processed = reference_engine()([case])[0]  # type: ignore[misc]
    program = program_of(case.name)
    owner = {impl: w.id for w in plan.workers() for impl in w.impl_tags}
    return [(owner[(program.tag(payload), key[1])], key, payload) for _, key, payload in processed]


def test_processed_oracle_judges_new_plan_workers_against_the_new_plan() -> None:
    case, replan = next((c, r) for c in DGS if (r := replan_of(c, len(case_chunks(c)))) is not None
                        and len([w for w in r.plan.workers() if w.impl_tags]) > 1)
    outputs, state, processed = reference_engine()([case])[0]  # type: ignore[misc]
    moved = _processed_under(case, replan.plan)
    half = len(moved) // 2
    mixed = list(processed[:half]) + moved[half:]  # first half before the re-plan, the rest after
    assert judge(case, (outputs, state, judged_processed(case, replan, mixed))) == []
    # a new-plan worker that is not responsible (nor an ancestor of the responsible one) fails
    program = program_of(case.name)
    by, key, payload = moved[-1]
    owner = {impl: w.id for w in replan.plan.workers() for impl in w.impl_tags}
    responsible = owner[(program.tag(payload), key[1])]
    wrong = next(w.id for w in replan.plan.workers()
                 if w.id != responsible and w.id not in replan.plan.ancestors(responsible))
    failed = judge(case, (outputs, state, judged_processed(case, replan, mixed[:-1] + [(wrong, key, payload)])))
    assert [o for o, _ in failed] == ["processed"] and "after the re-plan" in failed[0][1]
    assert judged_processed(case, None, mixed) == mixed


@dataclass(frozen=True)
class _Job:
    plan: Any = None


class _Run:
    stopped = False

    def stop(self) -> None:
        self.stopped = True


def test_a_restart_with_a_malformed_plan_must_be_refused_at_its_job() -> None:
    def start(locate: bool) -> Any:
        def run(bad: Sequence[_Job]) -> Any:
            for index, job in enumerate(bad):
                if job.plan is not None:
                    try:
                        plan_from_json(job.plan)
                    except InputError as error:
                        raise (error.located(f"jobs[{index}]") if locate and len(bad) > 1 else error) from None
            raise AssertionError("no malformed plan")
        return run

    jobs = [_Job(), _Job(), _Job()]
    assert refused_restart(start(True), jobs, 4) is None
    index, what = refused_restart(start(False), jobs, 5) or (None, "")
    assert index == 2 and "not located at jobs[2]" in what
    run = _Run()
    index, what = refused_restart(lambda bad: run, jobs, 3) or (None, "")
    assert index == 0 and "started a query" in what and run.stopped
    assert refused_restart(start(False), jobs[:1], 1) is None  # one job: its error is not located

    def always_located(bad: Sequence[_Job]) -> Any:
        raise InputError("expected a JSON object", "jobs[0]: plan.root")

    index, what = refused_restart(always_located, jobs, 1) or (None, "")
    assert index == 1 and "alone was refused" in what and "located at a job index" in what


def test_one_tick_cases_with_an_odd_seed_arrive_in_several_files() -> None:
    one_tick = [c for c in DGS if c.tick >= 1_000_000]
    cut = [len(case_chunks(c)) for c in one_tick if c.seed % 2]
    whole = [len(case_chunks(c)) for c in one_tick if not c.seed % 2]
    assert cut and whole and min(cut) > 1 and max(cut) <= FILES and set(whole) == {1}


def test_the_dgs_front_end_refuses_a_malformed_plan_at_its_job(tmp_path: Any) -> None:
    """The real front end, before it touches Spark or the checkpoint (what the live harness
    checks at every restart)."""
    class Source:
        isStreaming = True
        columns = ["value"]

    jobs = [LiveJob(target(c.name), c.plan, c.inline_below) for c in DGS[:3]]
    start = lambda bad: start_dgs_query(None, bad, Source(), checkpoint_dir=str(tmp_path))  # noqa: E731
    assert [refused_restart(start, jobs, n) for n in range(3)] == [None, None, None]
    assert list(tmp_path.iterdir()) == []  # nothing written
