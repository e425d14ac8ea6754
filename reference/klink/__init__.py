"""Efficient Klink: the SWM-ingestion estimator (``estimator``), the scheduling policies
(``policies``: Klink least slack with memory management, FCFS, round robin, highest rate,
StreamBox-style earliest deadline), the workload generator (``workload``) and the
deterministic discrete-event simulator (``simulator``). Verified against ``spec.klink``."""
