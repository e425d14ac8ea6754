"""Fries reference model: efficient conflict-serializability checking (``serializability``,
``compact``, ``cycles``) and the minimal covering sub-DAG with Fries' seed set (``mcs``),
each verified against :mod:`spec.fries` by the hypothesis properties in ``tests/``."""
