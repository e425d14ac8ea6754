"""Reconfiguration schedulers for the Fries simulator, one module each (Fries §3-7):
``naive`` (naive FCM), ``multi-version`` (FCM multi-version), ``epoch`` (EBR) and ``fries``
(Alg. 2/3/4). :func:`make_scheduler` builds one by name."""

from __future__ import annotations

from reference.fries.schedulers.base import Scheduler
from reference.fries.schedulers.epoch import EpochScheduler
from reference.fries.schedulers.fries import FriesScheduler
from reference.fries.schedulers.multi_version import MultiVersionScheduler
from reference.fries.schedulers.naive import NaiveScheduler
from spec.errors import InputError

SCHEDULERS = ("naive", "multi-version", "epoch", "fries")
"""The scheduler names :func:`make_scheduler` accepts."""


def make_scheduler(name: str, **options: bool) -> Scheduler:
    """The scheduler called ``name``; ``options`` are Fries' switches (``prune_edgewise``,
    ``prune_uniqueness``, ``one_to_many``) and only allowed for ``fries``."""
    if name == "fries":
        unknown = sorted(set(options) - {"prune_edgewise", "prune_uniqueness", "one_to_many"})
        if unknown:
            raise InputError(f"unknown Fries option(s) {unknown}", "scheduler")
        return FriesScheduler(**options)
    if options:
        raise InputError(f"scheduler {name!r} takes no options (got {sorted(options)})", "scheduler")
    if name == "naive":
        return NaiveScheduler()
    if name == "multi-version":
        return MultiVersionScheduler()
    if name == "epoch":
        return EpochScheduler()
    raise InputError(f"unknown scheduler {name!r} (expected one of {list(SCHEDULERS)})", "scheduler")


__all__ = ["SCHEDULERS", "Scheduler", "make_scheduler"]
