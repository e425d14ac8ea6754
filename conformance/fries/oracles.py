"""The oracles that judge one Fries run.

For a scenario and the engine's :class:`~conformance.fries.outcome.RunOutcome`:

* ``engine``       the engine ran the scenario without raising;
* ``schedule``     the trace is complete: every accepted request updated every object of every
  operator it reconfigures exactly once, and no operation names a transaction the scenario
  does not have (a missing update would make (a) vacuous);
* ``serializable`` (a) the schedule is conflict-serializable (Fries Def. 4.9), decided by the
  reference checker, which also gives a witness serial order;
* ``fifo``         every channel delivered what its sender sent, once and in send order
  (:mod:`spec.fries.consistency` (C2): an object that processes a tuple before one sent
  earlier on the same channel, or a tuple never sent to it, or leaves one unprocessed);
* ``outputs``      (b) the outputs equal, as multisets, those of the serial execution in the
  witness order up to the dependence relation "same object, same key" - i.e. of the
  :func:`spec.fries.consistency.replay` of the run's own per-object order ((C3); exactly the
  serial execution in the witness order when no function is order-sensitive) - compared with
  the online matcher (:mod:`conformance.core.matcher`) so the first unmatched records are reported;
* ``exactly-once`` (c) no output record is emitted more often than expected, and no
  transaction with expected output lost all of it - the restart property, reported apart from
  (b) so a duplicate after a restart is named as such;
* ``states``       the final per-(operator, key) states equal the expected ones (when the
  engine reports states).

Why the witness order and not "some" serial order: outputs depend on which data transactions
each reconfigured operator processed before its update; the conflict-serializability witness
fixes exactly that (Fries Theorem 5.8). With order-sensitive functions (``fold``, ``digest``)
they depend on each object's per-key input order too, which a correct engine may choose when
it merges different channels but must keep within one channel; the replay takes that order
from the run and checks it is FIFO (see :mod:`spec.fries.consistency` for why no single serial
order can stand in for it). Transactions absent from the schedule touched no object and may be
placed anywhere; they are appended in ingestion order.

Every oracle answers with a :class:`~conformance.core.verdict.Verdict` (its name, whether it
held, a one-line message, the explanation under it and the witness as data: the cycle, the
channel violations, the witness order and the first unmatched records, the duplicated records,
the differing states). :func:`judge` returns them all in a :class:`Judgement` (with the witness
order and the expected outputs); :attr:`Judgement.failures` is their text view for callers
written against it.

Rejected requests (the engine refused them) are removed from the scenario
before the serial execution and the remaining ones renumbered, so ``R3`` of the run may be
``R2`` of the effective scenario; reports use the run's ids.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from spec.fries.consistency import replay
from spec.fries.mcs import fries_mcs_definition
from spec.fries.scenario import Output, Scenario, SerialResult, ingestion_order, operator_of
from spec.fries.schedule import Operation, Schedule

from reference.fries.serializability import check_serializability

from spark_impl.keys import key_order

from conformance.core.matcher import Dependence, Mismatch, compare
from conformance.core.protocols import Oracle
from conformance.core.verdict import OracleName, Verdict, failed, failed_names, fails, holds
from conformance.fries.outcome import RunOutcome
from spark_impl.reconfig import scenario_job
from spark_impl.reconfig.mcs import object_components

Checker = Callable[[Schedule], Any]
"""``check_serializability(schedule) -> Verdict`` with ``serializable``, ``serial_order``,
``cycle`` and ``explain()`` (reference/fries/serializability.py)."""


@dataclass(frozen=True)
class OracleFailure:
    """One failed oracle as its name, a one-line summary and a plain-words explanation: the
    text view of a failed :class:`~conformance.core.verdict.Verdict` that
    :attr:`Judgement.failures` gives, kept for callers written against it."""

    oracle: str
    summary: str
    detail: str

    @staticmethod
    def of(verdict: Verdict) -> "OracleFailure":
        """The text view of ``verdict``."""
        return OracleFailure(verdict.name, verdict.message, verdict.detail)

    def to_json(self) -> dict[str, str]:
        """``{"oracle", "summary", "detail"}``."""
        return {"oracle": self.oracle, "summary": self.summary, "detail": self.detail}


@dataclass(frozen=True)
class Judgement:
    """The verdicts of every oracle judged on one run, in check order (an oracle after a
    failed ``engine`` or ``serializable`` is not judged), the serial order used for (b) and the
    expected outputs and states (the replay of the run, :mod:`spec.fries.consistency`)."""

    verdicts: tuple[Verdict, ...]
    witness: tuple[str, ...] | None
    expected: SerialResult | None

    @property
    def ok(self) -> bool:
        """True when every oracle held."""
        return all(v.held for v in self.verdicts)

    @property
    def failed_oracles(self) -> tuple[str, ...]:
        """Names of the failed oracles, in check order."""
        return failed_names(self.verdicts)

    @property
    def failures(self) -> tuple[OracleFailure, ...]:
        """The failed verdicts as :class:`OracleFailure` (their text view), in check order."""
        return tuple(OracleFailure.of(v) for v in failed(self.verdicts))


def default_checker() -> Checker:
    """The reference conflict-serializability checker (imported on first use)."""
    checker: Checker = check_serializability
    return checker


def engine_verdict(error: str | None) -> Verdict:
    """The ``engine`` oracle: the engine ran the case (``error`` None) or failed with ``error``."""
    if error is None:
        return holds(OracleName.ENGINE, "the engine ran the case")
    return fails(OracleName.ENGINE, "the engine failed", {"error": error}, error)


def serializable_verdict(verdict: Any) -> Verdict:
    """The ``serializable`` oracle (C1, Fries Def. 4.9) from the checker's answer: the cycle
    as the witness when the schedule is not conflict-serializable."""
    if verdict.serializable:
        return holds(OracleName.SERIALIZABLE, "the schedule is conflict-serializable")
    cycle = list(verdict.cycle or [])
    return fails(OracleName.SERIALIZABLE, f"schedule not conflict-serializable (cycle {' -> '.join(cycle)})",
                 {"cycle": cycle}, verdict.explain())


def fifo_verdict(violations: Sequence[Any]) -> Verdict:
    """The ``fifo`` oracle (C2): every channel FIFO, else the first violations."""
    if not violations:
        return holds(OracleName.CHANNEL_FIFO, "every channel delivered its tuples once and in send order")
    shown = [str(v) for v in violations[:10]]
    return fails(OracleName.CHANNEL_FIFO, f"{len(violations)} channel violation(s): {violations[0]}",
                 {"violations": shown}, "\n".join(shown))


def outputs_verdict(mismatch: Mismatch[Any] | None, message: str, order: Sequence[str]) -> Verdict:
    """The ``outputs`` oracle (C3): no ``mismatch``, else ``message`` with the witness order
    and the first unmatched records."""
    if mismatch is None:
        return holds(OracleName.OUTPUTS, "the outputs equal the serial execution's")
    return fails(OracleName.OUTPUTS, message, {"witness_order": list(order), "mismatch": mismatch.witness(show_record)},
                 f"witness order: {' '.join(order)}\n{mismatch.explain(show_record)}")


def judge(
    scenario: Scenario,
    run: RunOutcome,
    *,
    checker: Checker | None = None,
    dependence: Dependence[Output] | None = None,
) -> Judgement:
    """Apply every oracle to ``run`` (see the module docstring)."""
    if run.error is not None:
        return Judgement((engine_verdict(run.error),), None, None)
    verdicts = [engine_verdict(None)]
    effective, renumber = effective_scenario(scenario, run.rejected)
    verdicts.append(_schedule_complete(effective, renumber, run.schedule))
    verdicts.append(_placement(scenario, run.schedule))
    checked = (checker or default_checker())(run.schedule)
    verdicts.append(serializable_verdict(checked))
    if not checked.serializable:
        return Judgement(tuple(verdicts), None, None)
    witness = complete_order(effective, [renumber.get(t, t) for t in checked.serial_order])
    renamed = Schedule({obj: tuple(Operation(renumber.get(op.txn, op.txn), op.update) if op.update else op
                                   for op in log) for obj, log in run.schedule.logs.items()})
    replayed = replay(effective, renamed, run.senders)
    expected = SerialResult(replayed.outputs, replayed.states)
    back = {new: old for old, new in renumber.items()}
    shown_order = [back.get(t, t) for t in witness]
    verdicts.append(fifo_verdict(replayed.violations))
    verdicts.append(outputs_verdict(
        compare(expected.outputs.elements(), run.outputs, dependence),
        "outputs differ from the serial execution in the witness order (up to each object's per-key order)",
        shown_order))
    verdicts.append(exactly_once_verdict(expected.outputs, Counter(run.outputs), scenario))
    if run.states is not None:
        verdicts.append(states_verdict(expected.states, run.states))
    return Judgement(tuple(verdicts), tuple(shown_order), expected)


def verdicts(scenario: Scenario, run: RunOutcome) -> tuple[Verdict, ...]:
    """The Fries oracle (:class:`~conformance.core.protocols.Oracle`): the verdicts of
    :func:`judge` on ``run``."""
    return judge(scenario, run).verdicts


ORACLE: Oracle[Scenario, RunOutcome] = verdicts
"""The Fries oracle, as :class:`~conformance.core.protocols.Oracle`."""


def effective_scenario(scenario: Scenario, rejected: frozenset[str]) -> tuple[Scenario, dict[str, str]]:
    """``scenario`` without the rejected requests, and the renaming of the kept requests' ids
    (run id -> effective id; identical ids are included too)."""
    kept = [(f"R{j + 1}", r) for j, r in enumerate(scenario.reconfigurations) if f"R{j + 1}" not in rejected]
    renumber = {old: f"R{k + 1}" for k, (old, _) in enumerate(kept)}
    return replace(scenario, reconfigurations=tuple(r for _, r in kept)), renumber


def complete_order(scenario: Scenario, witness: Sequence[str]) -> list[str]:
    """The witness order restricted to the scenario's transactions (dropping e.g. the
    ``"O:final"`` flush transactions, which the serial execution runs at end of input), with
    the transactions it lacks appended in ingestion / request order."""
    known = [t.txn for t in ingestion_order(scenario)]
    known += [f"R{j + 1}" for j in range(len(scenario.reconfigurations))]
    known_set = set(known)
    order: list[str] = []
    seen: set[str] = set()
    for txn in witness:
        if txn in known_set and txn not in seen:
            order.append(txn)
            seen.add(txn)
    order.extend(t for t in known if t not in seen)
    return order


def _placement(scenario: Scenario, schedule: Schedule) -> Verdict:
    """Every data operation ran on the object that holds its key (Fries §7.2: ``O#(k mod p)``).

    Catalogue functions never change a tuple's key (:mod:`spec.fries.catalogue`), so a data
    transaction's key at every operator is its source tuple's. A routing bug that is consistent
    (the same key always on the same wrong object) changes no output, state or schedule
    property: only this oracle sees it. Sources are skipped (their tuples are not routed)."""
    key_of = {t.txn: t.key for t in ingestion_order(scenario)}
    for obj, _, op in schedule.operations():
        operator = operator_of(obj)
        if op.update or op.txn not in key_of or operator in scenario.sources:
            continue
        expected = scenario.object_of(operator, key_of[op.txn])
        if obj != expected:
            return fails(
                OracleName.PLACEMENT,
                f"object {obj} processed {op.txn} (key {key_of[op.txn]}), whose key belongs to {expected}",
                {"object": obj, "transaction": op.txn, "key": key_of[op.txn], "owner": expected},
                f"{operator} has {scenario.workers(operator)} workers; key {key_of[op.txn]} lives on {expected} "
                "(key mod workers)")
    return holds(OracleName.PLACEMENT, "every data operation ran on the object that holds its key")


def _schedule_complete(scenario: Scenario, renumber: dict[str, str], schedule: Schedule) -> Verdict:
    problems: list[str] = []
    updates: Counter[tuple[str, str]] = Counter()
    data_txns = {t.txn for t in ingestion_order(scenario)}
    for obj, _, op in schedule.operations():
        if op.update:
            updates[(renumber.get(op.txn, op.txn), obj)] += 1
        elif op.txn not in data_txns and not op.txn.endswith(":final"):
            problems.append(f"object {obj} logs an operation of unknown transaction {op.txn!r}")
            break
    back = {new: old for old, new in renumber.items()}
    for j, request in enumerate(scenario.reconfigurations):
        txn = f"R{j + 1}"
        for operator in request.updates:
            for obj in scenario.objects(operator):
                n = updates.get((txn, obj), 0)
                if n != 1:
                    problems.append(f"{back.get(txn, txn)} updated object {obj} {n} times (expected once)")
    return schedule_verdict(problems)


def schedule_verdict(problems: Sequence[str]) -> Verdict:
    """The ``schedule`` oracle from the problems found in the trace (none: it holds)."""
    if not problems:
        return holds(OracleName.SCHEDULE, "every request updated each of its objects once")
    return fails(OracleName.SCHEDULE, problems[0], {"problems": list(problems[:10])}, "\n".join(problems[:10]))


def exactly_once_verdict(expected: Counter[Output], actual: Counter[Output], scenario: Scenario) -> Verdict:
    """The ``exactly-once`` oracle (c): the duplicated records and the transactions that lost
    all their expected output (the witness), with the case's restart points."""
    duplicated = [(rec, n, expected[rec]) for rec, n in actual.items() if expected[rec] and n > expected[rec]]
    expected_txns = {rec[1] for rec in expected}
    actual_txns = {rec[1] for rec in actual}
    lost = sorted(expected_txns - actual_txns)
    if not duplicated and not lost:
        return holds(OracleName.EXACTLY_ONCE, "no output duplicated or lost")
    shown = sorted(duplicated, key=lambda d: record_rank(d[0]))[:5]
    lines = [f"record {show_record(rec)} emitted {n} times, expected {m}" for rec, n, m in shown]
    lines += [f"transaction {txn} produced none of its expected output" for txn in lost[:5]]
    restarts = scenario.timing.restarts
    context = f" (run restarted after {list(restarts)} source tuples)" if restarts else ""
    what = "duplicated" if duplicated else "lost"
    if duplicated and lost:
        what = "duplicated and lost"
    witness = {"duplicated": [[show_record(rec), n, m] for rec, n, m in shown], "lost": lost[:5],
               "restarts": list(restarts)}
    return fails(OracleName.EXACTLY_ONCE, f"output {what}{context}", witness, "\n".join(lines))


def any_key_rank(key: Any) -> tuple[int, Any]:
    """A total, deterministic order on keys of any type a user's operator emits (``None`` for
    one kind of tuple next to tuples or strings for another): :func:`spark_impl.keys.key_order`
    (numbers numerically, then the stable hash), a key it cannot hash after those by ``repr``.
    A plain ``sorted`` raises TypeError on mixed types, which would hide every oracle's
    verdict behind a crash."""
    try:
        return (0, key_order(key))
    except TypeError:
        return (1, repr(key))


def record_rank(record: Any) -> tuple[Any, ...]:
    """An output record ``(sink, txn, key, value)`` in a total order (see :func:`any_key_rank`)."""
    if isinstance(record, tuple) and len(record) == 4:
        sink, txn, key, value = record
        return (str(sink), str(txn), any_key_rank(key), repr(value))
    return ("", "", (1, repr(record)), "")


def states_verdict(expected: Any, actual: Any) -> Verdict:
    """The ``states`` oracle: every (operator, key) whose final state differs, in a total order
    of the keys whatever their types (:func:`any_key_rank`)."""
    keys = sorted(set(expected) | set(actual), key=lambda k: (str(k[0]), any_key_rank(k[1])))
    wrong = [(k, expected.get(k), actual.get(k)) for k in keys if expected.get(k) != actual.get(k)]
    if not wrong:
        return holds(OracleName.STATES, "the final states equal the serial execution's")
    lines = [f"state of {op} key {key}: expected {e}, got {a}" for (op, key), e, a in wrong[:5]]
    witness = [{"operator": op, "key": key, "expected": e, "got": a} for (op, key), e, a in wrong[:5]]
    return fails(OracleName.STATES, f"{len(wrong)} final state(s) differ from the serial execution",
                 {"states": witness}, "\n".join(lines))


def show_record(record: Any) -> str:
    """An output record in words."""
    if isinstance(record, tuple) and len(record) == 4:
        sink, txn, key, value = record
        return f"{sink} <- (key {key}, value {value}) of {txn}"
    return repr(record)


Role = tuple[bool, bool, frozenset[str], frozenset[str]]
"""(head, reconfigured, parents, children) of one object."""


def spec_roles(flow: Any, workers: Mapping[str, tuple[str, ...]], targets: frozenset[str]) -> dict[str, Role]:
    """The object roles the spec names for a request reconfiguring ``targets``:
    ``fries_mcs_definition`` gives the MCS vertices and edges (Def. 5.4 over the seed set of
    Alg. 3/4, on the pipelined view of §7.1), its heads are the vertices with no MCS edge into
    them; §7.2 expands it to objects (every worker of an MCS operator takes part, is a head iff
    its operator is, is reconfigured iff its operator is, and aligns on every worker of each MCS
    parent)."""
    vertices, edges, _, _ = fries_mcs_definition(flow, targets)
    roles: dict[str, Role] = {}
    for op in vertices:
        head = not any(b == op for _, b in edges)
        parents = frozenset(w for a, b in edges if b == op for w in workers[a])
        children = frozenset(w for a, b in edges if a == op for w in workers[b])
        for obj in workers[op]:
            roles[obj] = (head, op in targets, parents, children)
    return roles


def mcs_problem(scenario: Scenario) -> str | None:
    """The MCS oracle: the first request of ``scenario`` whose roles in spark_impl
    (:func:`spark_impl.reconfig.mcs.object_components`, called directly so the executor's cache
    is untouched) differ from :func:`spec_roles`, in words; None when every request agrees.
    Operator- and object-level, so seed-set, pruning and expansion bugs all show as a named
    difference (:mod:`conformance.fries.driver_oracles.mcs`)."""
    job = scenario_job(scenario)
    workers = {name: tuple(job.objects(name)) for name in job.dataflow.names}
    for j, request in enumerate(scenario.reconfigurations):
        targets = frozenset(request.updates)
        got = {obj: (r.head, r.reconfigured, frozenset(r.parents), frozenset(r.children))
               for obj, r in object_components(job.dataflow, workers, targets).items()}
        want = spec_roles(job.dataflow, workers, targets)
        if got != want:
            return f"MCS of R{j + 1} (reconfiguring {sorted(targets)}): {_difference(got, want)}"
    return None


def _difference(got: dict[str, Role], want: dict[str, Role]) -> str:
    extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
    if extra or missing:
        return (f"the executor synchronises objects {sorted(got)}; Fries Alg. 1-4 name {sorted(want)} "
                f"(extra {extra}, missing {missing})")
    for obj in sorted(got):
        if got[obj] != want[obj]:
            names = ("head", "reconfigured", "aligns on", "sends markers to")
            diffs = [f"{name} {_show(g)} instead of {_show(w)}"
                     for name, g, w in zip(names, got[obj], want[obj]) if g != w]
            return f"object {obj}: " + ", ".join(diffs)
    return "roles differ"  # pragma: no cover - got != want implies one of the above


def _show(value: Any) -> str:
    return str(sorted(value)) if isinstance(value, frozenset) else str(value)
