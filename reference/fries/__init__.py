"""Fries reference model: efficient conflict-serializability checking (``serializability``,
``compact``, ``cycles``) and the minimal covering sub-DAG with Fries' seed set (``mcs``),
each verified against :mod:`spec.fries` by the hypothesis properties in ``tests/``; the
reconfiguration simulator (``simulator``), its ``schedulers`` and what both share: the
object-level ``topology`` and the channel ``messages``."""
