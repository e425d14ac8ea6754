"""Fries (paper 000): runtime reconfiguration as a transaction.

Modules: ``dataflow`` (DAGs and operator kinds, Fries §2, Def. 5.1-5.3), ``schedule``
(operations, conflicts and schedules as per-object logs, Def. 4.3-4.7), and the definitions
built on them (conflict-serializability Def. 4.8-4.9, the minimal covering sub-DAG Def. 5.4).
"""
