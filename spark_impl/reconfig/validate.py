"""Checking a reconfiguration request before it is made.

A bad request is *rejected with a message*; the stream keeps running. Checked: every named
operator exists and is not a source; each update has callable logic and transformation; the
state transformation is dry-run on the operator's last committed state of every key (so a
transformation that raises is caught on the driver, before any object switched - a switch
must never be half applied). A transformation that raises only in a task (a key state created
after the last commit, a library missing on the executors) is caught at the switch: the job
rolls back to its last commit and the request is rejected (driver.py, task.py).
"""

from __future__ import annotations

from typing import Any, Mapping

from spec.fries.dataflow import OperatorKind
from spark_impl.keys import key_order
from spark_impl.reconfig.model import Job, Request


def validate_request(job: Job, request: Request, states: Mapping[tuple[str, Any], Any]) -> str | None:
    """None if ``request`` may be made, else the one-line reason it is rejected."""
    if not request.updates:
        return "the request updates no operator"
    flow = job.dataflow
    for name, update in request.updates.items():
        if name not in flow:
            return f"request names unknown operator {name!r} (operators: {', '.join(flow.names)})"
        if flow.kind(name) is OperatorKind.SOURCE:
            return f"operator {name!r} is a source and cannot be reconfigured"
        if not callable(getattr(update.logic, "process", None)):
            return f"the new logic of {name!r} has no process(state, key, value) method"
        if not callable(update.transform):
            return f"the state transformation of {name!r} is not callable"
    for (name, key), state in sorted(states.items(), key=lambda item: (item[0][0], key_order(item[0][1]))):
        if name not in request.updates:
            continue
        try:
            request.updates[name].transform(state)
        except Exception as error:  # noqa: BLE001 - any failure of user code rejects the request
            return (f"the state transformation of {name!r} raised {type(error).__name__}: {error} "
                    f"on the state of key {key}")
    return None
