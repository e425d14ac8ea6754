"""The DGS suite's oracles: a run of a case against ``spec(sort(u))`` (DGS Theorem 3.5).

:func:`verdicts` returns the verdict of every oracle judged on one run, in order
(:class:`~conformance.core.verdict.Verdict`; :func:`judge` gives the failed ones as text):

* ``engine`` - the run raised or never ended (:mod:`conformance.core.crashes`);
* ``outputs`` - the outputs equal ``spec(sort(u))`` as multisets (compared with the matcher by
  ``repr``, since DGS outputs need not be hashable);
* ``processed`` - every input event was processed exactly once, by its responsible worker or,
  inlined, by an ancestor, and the trace lists them in key order (:func:`trace_problem`);
* ``state`` - the final state, every leaf joined back into the root, equals the sequential
  program's by the program's state equality.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from spec.dgs.semantics import spec_run
from spec.dgs.streams import StreamEvent, sort_streams

from conformance.core.crashes import Crash, describe
from conformance.core.matcher import compare
from conformance.core.protocols import Engine, Oracle
from conformance.core.verdict import OracleName, Verdict, failed, from_text, holds
from conformance.dgs.cases import DgsCase, program_of

Observed = tuple[list[Any], Any, list[tuple[str, tuple[int, str], Any]]]
"""What a run shows: outputs, final state, processed events ``(worker, key, payload)``."""

BatchEngine = Engine[DgsCase, "Observed | Crash"]
"""A DGS engine (:class:`~conformance.core.protocols.Engine`): runs a batch of cases, one
observation (or crash) per case, in order."""


def verdicts(case: DgsCase, observed: Observed | Crash) -> tuple[Verdict, ...]:
    """The DGS oracle (:class:`~conformance.core.protocols.Oracle`): the verdict of every
    oracle judged on one run, in order (module docstring); only ``engine`` when the run crashed."""
    if isinstance(observed, Crash):
        return (from_text(OracleName.ENGINE, observed.explain(), {"error": observed.message, "alone": observed.alone}),)
    outputs, final_state, processed = observed
    program = program_of(case.name)
    expected_state, expected = spec_run(program, sort_streams(case.streams))
    found = [holds(OracleName.ENGINE, "the engine ran the case")]
    mismatch = compare([repr(x) for x in expected], [repr(x) for x in outputs])
    found.append(holds(OracleName.OUTPUTS, "the outputs equal spec(sort(u))") if mismatch is None else
                 from_text(OracleName.OUTPUTS, f"outputs differ from spec(sort(u)):\n{mismatch.explain(str)}",
                           mismatch.witness(str)))
    trace = trace_problem(case, processed)
    found.append(holds(OracleName.PROCESSED, "every event processed once, by its worker or an ancestor, in key "
                                             "order") if trace is None else
                 from_text(OracleName.PROCESSED, trace, {"problem": trace}))
    try:
        same = program.states_equal(program.initial, final_state, expected_state)
    except Exception as error:  # noqa: BLE001 - a malformed engine state is the engine's fault
        same, final_state = False, f"{final_state!r} ({describe(error)})"
    found.append(holds(OracleName.JOINED_STATE, "the final state equals the sequential program's") if same else
                 from_text(OracleName.JOINED_STATE,
                           f"final state {final_state!r}, the sequential program's is {expected_state!r}",
                           {"got": repr(final_state), "expected": repr(expected_state)}))
    return tuple(found)


ORACLE: Oracle[DgsCase, "Observed | Crash"] = verdicts
"""The DGS oracle, as :class:`~conformance.core.protocols.Oracle`."""


def judge(case: DgsCase, observed: Observed | Crash) -> list[tuple[str, str]]:
    """The failed oracles of one run as ``(name, explanation)`` pairs, in order: the text view
    of :func:`verdicts`, kept for callers written against it."""
    return [(v.name, v.explanation) for v in failed(verdicts(case, observed))]


def trace_problem(case: DgsCase, processed: Sequence[tuple[str, tuple[int, str], Any]]) -> str | None:
    """None when every event was processed once by its worker or an ancestor of it, and the
    trace lists them in key order (``DgsRun``'s format, batch and live; the reference engine's
    trace is sorted so: a live ``results()`` sorting its trace by
    the payload went unnoticed otherwise)."""
    program = program_of(case.name)
    owner = {impl: w.id for w in case.plan.workers() for impl in w.impl_tags}
    above = {w.id: {w.id} for w in case.plan.workers()}
    for worker in case.plan.workers():
        for child in worker.children:
            for below in child.walk():
                above[below.id].add(worker.id)
    wanted = Counter((item.ts, stream, repr(item.payload)) for stream, items in case.streams.items()
                     for item in items if isinstance(item, StreamEvent))
    seen = Counter((key[0], key[1], repr(payload)) for _, key, payload in processed)
    if seen != wanted:
        lost, extra = sorted((wanted - seen).elements()), sorted((seen - wanted).elements())
        return (f"processed events differ from the input: never processed {lost[:5]}"
                f"{' ...' if len(lost) > 5 else ''}; processed but not in the input or twice {extra[:5]}"
                f"{' ...' if len(extra) > 5 else ''}")
    keys = [key for _, key, _ in processed]
    unsorted = next((i for i in range(1, len(keys)) if keys[i] < keys[i - 1]), None)
    if unsorted is not None:
        return (f"processed events are not in key order: {keys[unsorted]} (ts, stream) is listed after "
                f"{keys[unsorted - 1]} (a run's trace is in key order)")
    for by, (ts, stream), payload in processed:
        responsible = owner.get((program.tag(payload), stream))
        if responsible is None or by not in above[responsible]:
            return (f"event {payload!r} (ts {ts}, stream {stream}) processed by {by}, not by its "
                    f"responsible worker {responsible} or an ancestor of it")
    return None
