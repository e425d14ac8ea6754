"""The nemesis' fault catalogue and the order in which it draws faults (no cluster needed).

:data:`FAULTS` names every fault kind with what it does; :func:`parse_faults` turns the
``--faults`` list into a selection (one-line :class:`~spec.errors.InputError` listing the valid
names on an unknown one); :class:`FaultPlan` draws the next fault: first every selected kind
once (in a seeded random order, so a short run still covers every kind), then weighted draws.
A kind is only drawn when it is *applicable* right now (the state-file faults need a Fries
round with a committed batch); :class:`FaultPlan` also draws *when* to inject - at a random
moment, or as soon as a reconfiguration or a rescale is in progress.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Iterable

from spec.errors import InputError

FAULTS: dict[str, str] = {
    "executor-kill": "kill -9 of an executor JVM (CoarseGrainedExecutorBackend)",
    "python-kill": "kill -9 of a PySpark Python worker of an executor",
    "driver-kill": "kill -9 of the driver (spark-submit JVM and its Python), then a new driver "
                   "resumes the round from its checkpoint (Executor(resume=True))",
    "executor-pause": "SIGSTOP of an executor JVM past the heartbeat timeout, then SIGCONT",
    "worker-restart": "stop a worker (its JVM, executor and Python processes), start a new one",
    "state-truncate": "truncate a committed state file of the running Fries round",
    "state-corrupt": "flip one byte of a committed state file of the running Fries round",
}

WEIGHTS: dict[str, int] = {"executor-kill": 3, "python-kill": 3, "driver-kill": 1, "executor-pause": 2,
                           "worker-restart": 1, "state-truncate": 1, "state-corrupt": 1}
"""Relative frequency after the first pass (driver kills and restarts are the slowest to
recover from, the state-file faults end their round)."""

STATE_FAULTS = frozenset({"state-truncate", "state-corrupt"})
MOMENTS = ("any", "reconfiguration", "rescale")
"""When to inject: a random moment, or as soon as a Fries request / an O+ handover is in progress."""


def parse_faults(text: str | None) -> tuple[str, ...]:
    """The selected fault kinds (all when ``text`` is None or "all"), in catalogue order."""
    if text is None or text.strip() == "all":
        return tuple(FAULTS)
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in FAULTS]
    if unknown or not names:
        what = f"unknown fault(s) {', '.join(unknown)}" if unknown else "no fault named"
        raise InputError(f"{what}; valid: {', '.join(FAULTS)} (or all)", "--faults")
    return tuple(name for name in FAULTS if name in names)


@dataclass
class FaultPlan:
    """Draws faults and moments from ``seed`` (module docstring)."""

    selected: tuple[str, ...]
    seed: int
    rng: random.Random = field(init=False)
    pending: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.pending = list(self.selected)
        self.rng.shuffle(self.pending)

    def next_fault(self, applicable: Iterable[str]) -> str | None:
        """The next fault among ``applicable`` (None when none of the selected is)."""
        possible = [name for name in self.selected if name in set(applicable)]
        if not possible:
            return None
        for name in self.pending:
            if name in possible:
                self.pending.remove(name)
                return name
        return self.rng.choices(possible, weights=[WEIGHTS[name] for name in possible])[0]

    def moment(self, job: str | None = None) -> str:
        """When to inject the next fault (one of :data:`MOMENTS`); during a round of ``job``
        only the moments that job has (a Fries round reconfigures, an O+ round rescales)."""
        own = {"fries": ("any", "reconfiguration"), "oplus": ("any", "rescale")}
        return self.rng.choice(MOMENTS if job is None else own.get(job, ("any",)))

    def gap_s(self) -> float:
        """Seconds to wait before arming the next fault."""
        return self.rng.uniform(3.0, 12.0)

    def pick(self, candidates: list[int]) -> int:
        """One of ``candidates`` (pids, indices), reproducibly."""
        return candidates[self.rng.randrange(len(candidates))]

    def below(self, n: int) -> int:
        """A number in ``[0, n)``."""
        return self.rng.randrange(n)
