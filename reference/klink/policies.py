"""Scheduling policies (Klink §3, §3.4, §6.1.3).

A policy picks, whenever a core is free, which of the runnable queries (those with queued
items and not running on another core) runs next for one quantum of ``r`` seconds. Policies
see the simulator through :class:`SchedulerView`.

* ``klink``: least expected slack (Eq. 8, Alg. 1; joins take the minimum over inputs, §3.3);
  when memory ``>= b`` (Fig. 3) the query releasing the most events, ``p = sz * (1 - prod
  S)`` with ``sz`` capped by what one quantum can process (§3.4), ties broken by least slack.
* ``klink-nomm``: Klink without the memory policy.
* ``fcfs``: the query whose oldest queued item was ingested first (global arrival order).
* ``rr``: round robin over the queries.
* ``hr``: Highest Rate [48]: the static priority ``selectivity / cost`` (output events per
  second of processing).
* ``sbox``: StreamBox-style: the query with the closest window deadline (an extra baseline).
"""

from __future__ import annotations

import math
from typing import Protocol, Sequence

from spec.errors import InputError


class SchedulerView(Protocol):
    """What the simulator exposes to policies at the decision instant."""

    def slack(self, query: int, now: float) -> float:
        """Klink's expected slack of ``query`` (Eq. 8, min over inputs)."""

    def head_arrival(self, query: int) -> float:
        """Ingestion time of ``query``'s oldest unprocessed item."""

    def rate_priority(self, query: int) -> float:
        """HR's output rate: selectivity per second of processing."""

    def releasable(self, query: int) -> float:
        """Klink §3.4's ``p``: events released by running ``query`` for one quantum."""

    def memory(self) -> float:
        """Current memory use (queued events plus join state)."""

    def next_deadline(self, query: int) -> float:
        """The deadline of ``query``'s next window to fire."""


class Policy(Protocol):
    """Chooses one of ``candidates`` (non-empty, ascending query indices)."""

    name: str

    def choose(self, view: SchedulerView, now: float, candidates: Sequence[int]) -> int:
        """The query to run next."""


def _argmin(candidates: Sequence[int], key: list[float]) -> int:
    best = candidates[0]
    best_key = key[0]
    for q, k in zip(candidates, key):
        if k < best_key:
            best, best_key = q, k
    return best


class Klink:
    """Least slack, with the memory-pressure policy above ``bound`` (``None``: never).

    Klink §3.4 bounds each run of the memory manager: "until half of the consumed memory
    has been freed or after three seconds have elapsed". Interpretation choice: an episode
    starts when memory ``>= bound``, ends when memory has halved or after ``episode``
    seconds, and is followed by at least ``episode`` seconds of least slack before the next
    one (without that rest, sustained pressure would keep the memory manager on forever and
    least slack would never run, contrary to "ensures that Klink can continue to apply its
    least slack policy")."""

    def __init__(self, bound: float | None, episode: float = 1.0) -> None:
        self.bound = bound
        self.episode = episode
        self.name = "klink" if bound is not None else "klink-nomm"
        self.memory_mode_decisions = 0
        self.episodes = 0
        self._episode_end: float | None = None
        self._target = 0.0
        self._rest_until = -math.inf

    def _memory_mode(self, memory: float, now: float) -> bool:
        if self.bound is None:
            return False
        if self._episode_end is None and memory >= self.bound and now >= self._rest_until:
            self._episode_end = now + self.episode
            self._target = memory / 2.0
            self.episodes += 1
        if self._episode_end is not None and (now >= self._episode_end or memory <= self._target):
            self._episode_end = None
            self._rest_until = now + self.episode
        return self._episode_end is not None

    def choose(self, view: SchedulerView, now: float, candidates: Sequence[int]) -> int:
        slacks = [view.slack(q, now) for q in candidates]
        if self._memory_mode(view.memory(), now):
            self.memory_mode_decisions += 1
            released = [view.releasable(q) for q in candidates]
            top = max(released)
            keys = [s if p >= top else math.inf for s, p in zip(slacks, released)]
            return _argmin(candidates, keys)
        return _argmin(candidates, slacks)


class Fcfs:
    """First come, first served across queries."""

    name = "fcfs"

    def choose(self, view: SchedulerView, now: float, candidates: Sequence[int]) -> int:
        return _argmin(candidates, [view.head_arrival(q) for q in candidates])


class RoundRobin:
    """Cycles over the queries, skipping those that cannot run."""

    name = "rr"

    def __init__(self) -> None:
        self.last = -1

    def choose(self, view: SchedulerView, now: float, candidates: Sequence[int]) -> int:
        after = [q for q in candidates if q > self.last]
        self.last = after[0] if after else candidates[0]
        return self.last


class HighestRate:
    """Highest Rate: the largest static selectivity / cost."""

    name = "hr"

    def choose(self, view: SchedulerView, now: float, candidates: Sequence[int]) -> int:
        return _argmin(candidates, [-view.rate_priority(q) for q in candidates])


class StreamBox:
    """Closest window deadline first."""

    name = "sbox"

    def choose(self, view: SchedulerView, now: float, candidates: Sequence[int]) -> int:
        return _argmin(candidates, [view.next_deadline(q) for q in candidates])


POLICIES = ("klink", "fcfs", "rr", "hr", "klink-nomm", "sbox")


def make_policy(name: str, memory_bound: float) -> Policy:
    """A fresh policy object called ``name`` (policies keep state, e.g. RR's position)."""
    if name == "klink":
        return Klink(memory_bound)
    if name == "klink-nomm":
        return Klink(None)
    if name == "fcfs":
        return Fcfs()
    if name == "rr":
        return RoundRobin()
    if name == "hr":
        return HighestRate()
    if name == "sbox":
        return StreamBox()
    raise InputError(f"unknown policy {name!r} (expected one of {POLICIES})", "policy")
