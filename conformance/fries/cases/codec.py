"""Writing a :class:`spec.fries.scenario.Scenario` back to its JSON form.

The spec module parses the format; the suite also has to *write* it (shrunk counterexamples,
regression files, vectors). :func:`scenario_to_json` is the inverse of
:func:`spec.fries.scenario.scenario_from_json`: ``scenario_from_json(scenario_to_json(s)) ==
s`` for every valid scenario (checked by a hypothesis property in the tests). Default-valued
optional fields are left out so written files stay small and readable.
"""

from __future__ import annotations

from typing import Any

from spec.fries.scenario import Reconfiguration, Scenario, Timing


def scenario_to_json(scenario: Scenario) -> dict[str, Any]:
    """The JSON form of ``scenario`` (see :mod:`spec.fries.scenario`)."""
    value: dict[str, Any] = {
        "dataflow": scenario.dataflow.to_json(),
        "functions": {name: fn.to_json() for name, fn in scenario.functions.items()},
        "sources": {
            name: [{"key": t.key, "value": t.value} for t in tuples]
            for name, tuples in scenario.sources.items()
        },
    }
    if scenario.reconfigurations:
        value["reconfigurations"] = [_reconfiguration(r) for r in scenario.reconfigurations]
    if scenario.parallelism:
        value["parallelism"] = dict(scenario.parallelism)
    timing = timing_to_json(scenario.timing)
    if timing:
        value["timing"] = timing
    return value


def _reconfiguration(request: Reconfiguration) -> dict[str, Any]:
    return {
        "at": request.at,
        "updates": {
            name: {"function": update.function.to_json(),
                   "state": {"mul": update.state.mul, "add": update.state.add}}
            for name, update in request.updates.items()
        },
    }


def timing_to_json(timing: Timing) -> dict[str, Any]:
    """The non-default fields of ``timing`` as JSON."""
    default = Timing()
    value: dict[str, Any] = {}
    if timing.seed != default.seed:
        value["seed"] = timing.seed
    if timing.ingest_interval != default.ingest_interval:
        value["ingest_interval"] = timing.ingest_interval
    if timing.operator_cost:
        value["operator_cost"] = dict(timing.operator_cost)
    if timing.channel_delay != default.channel_delay:
        value["channel_delay"] = list(timing.channel_delay)
    if timing.fcm_delay != default.fcm_delay:
        value["fcm_delay"] = list(timing.fcm_delay)
    if timing.stragglers:
        value["stragglers"] = dict(timing.stragglers)
    if timing.restarts:
        value["restarts"] = list(timing.restarts)
    if timing.reorder_bound != default.reorder_bound:
        value["reorder_bound"] = timing.reorder_bound
    return value
