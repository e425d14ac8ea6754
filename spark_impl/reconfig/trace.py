"""Writing a run's trace in the reference CLI's formats.

``schedule.json`` is :meth:`spec.fries.schedule.Schedule.to_json` (so ``streamproof
check-schedule schedule.json`` checks it directly) and ``outputs.json`` is
``{"outputs": [[sink, txn, key, value], ...]}`` (the committed sink records, duplicates kept),
with ``states.json`` = ``{"states": [[operator, key, state], ...]}`` and ``delays_ms``.
"""

from __future__ import annotations

import os
from typing import Any

from spark_impl.keys import key_order
from spec.jsonio import write_json_atomic


def write_trace(result: Any, directory: str) -> dict[str, str]:
    """Write ``result`` (a :class:`~spark_impl.reconfig.api.RunResult`) into ``directory``;
    return the paths written by kind."""
    os.makedirs(directory, exist_ok=True)
    paths = {name: os.path.join(directory, f"{name}.json") for name in ("schedule", "outputs", "states")}
    write_json_atomic(paths["schedule"], result.schedule.to_json())
    write_json_atomic(paths["outputs"], {"outputs": [list(o) for o in result.outputs],
                                         "delays_ms": list(result.delays_ms), "rejected": list(result.rejected)})
    write_json_atomic(paths["states"], {"states": [[op, key, value] for (op, key), value in
                                            sorted(result.states.items(), key=lambda item: (item[0][0], key_order(item[0][1])))]})
    return paths
