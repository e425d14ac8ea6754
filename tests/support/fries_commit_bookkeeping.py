"""Judges of a Fries executor's commit bookkeeping, read from its driver state and batch plans.

Commits that come late or never show in no output (a crash then replays more), and the oracles
see only the committed history, which a run without a crash gives too: these judges read the
driver's own bookkeeping after every batch (:func:`uncommitted`) and at the end of a run with
``timing.restarts`` (:func:`restart_problem`). Both return a one-line problem or nothing.
"""

from __future__ import annotations

from typing import Any


def uncommitted(ex: Any) -> dict[int, str]:
    """Jobs whose batch just run was neither committed nor rolled back although Fries §7.3
    allowed the commit (``driver``'s docstring: after each batch the driver commits every job
    whose state is consistent, except one whose active request has a head without its FCM, or
    a user's request in progress). The other direction, no commit in that window, is
    :class:`conformance.fries.engines.stepped.CommitWatch`'s."""
    g = ex.g - 1
    found: dict[int, str] = {}
    for s, st in enumerate(ex.state):
        live, a = st.live, st.live.active
        if g not in live.pending:  # committed, rolled back, or the job did not run
            continue
        if a is None or not (a.user or set(a.heads) - set(a.switched)):
            found[s] = (f"batch {g} was left uncommitted (pending {live.pending}) although "
                        f"{'no request was in progress' if a is None else f'every head of R{a.j} had its FCM'}: "
                        "after each batch the driver commits every consistent job (Fries §7.3)")
    return found


def restart_problem(name: str, scenario: Any, history: list[int], ranges: dict[int, tuple[int, int]]) -> str | None:
    """The restart bookkeeping of one job (``timing.restarts``, ``driver``'s docstring: "the
    batch in which a job's ingestion reaches a listed count runs, then the job crashes before
    its commit and recovers from its last commit"). ``ranges``: the source tuples [lo, hi)
    each batch that ran the job ingested. Walking the batches in order, a batch crashes (runs,
    is never committed) exactly when its ingestion reached a listed count not reached before;
    the crash also rolls back the batches still pending before it (run since the last commit:
    a request's heads lacked the FCM), and no other batch stays uncommitted; the tuples after
    the last commit are ingested again."""
    count = sum(len(tuples) for tuples in scenario.sources.values())
    pending = sorted(c for c in scenario.timing.restarts if c <= count)
    committed = set(history)
    crashes: dict[int, int] = {}  # batch -> the listed count it reached first
    for g in sorted(ranges):
        due = [c for c in pending if ranges[g][1] >= c]
        pending = [c for c in pending if c not in due]
        if due:
            crashes[g] = due[0]
    for g in sorted(ranges):
        if g in crashes and g in committed:
            return (f"{name}: batch {g} ingested up to {ranges[g][1]} tuples, reaching the restart at {crashes[g]}, "
                    "and was committed: the crash before its commit never happened")
        crash = min((c for c in crashes if c >= g), default=None)
        if g not in committed and (crash is None or any(b in committed for b in ranges if g <= b <= crash)):
            return (f"{name}: batch {g} (tuples {ranges[g][0]}..{ranges[g][1]}) ran and was never committed, "
                    f"though it reached no listed restart ({list(scenario.timing.restarts)}) and no crash "
                    "rolled it back before a commit")
    ingested = sum(hi - lo for lo, hi in ranges.values())
    if pending or (ingested <= count) != (not scenario.timing.restarts):
        return (f"{name}: {ingested} source tuples ingested for {count} (restarts {list(scenario.timing.restarts)}, "
                f"never reached: {pending}): a crash replays the tuples after the last commit, nothing else does")
    return None
