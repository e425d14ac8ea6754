"""The simulator's event order: events run by (time, priority, creation order), and the
priorities at equal times are these (controller actions, then ingestion, then the rest).

A module of its own because both the engine and the checkpoint tracker schedule events and
the tracker must not import the engine (which owns the tracker)."""

CONTROL, INGEST, WORK = 0, 1, 2
"""Event priorities at equal times: controller actions, then ingestion, then the rest."""
