"""Klink: progress-aware scheduling of windowed queries (Farhat, Daudjee, Querzoni, SIGMOD 2021).

* :mod:`spec.klink.watermarks` - watermarks, window deadlines, sweeping watermarks (SWM) and
  the epochs between them (Klink §2.1, §2.2, §3);
* :mod:`spec.klink.slack` - the end-to-end cost of queued events and the slack of Eq. 1, with
  joins taking the minimum over their inputs (§3.3);
* :mod:`spec.klink.estimator` - the SWM-ingestion estimator of Eq. 2-10 and the expected
  slack of Alg. 1, stated literally and slowly;
* :mod:`spec.klink.memory` - the memory-pressure metric p = sz * (1 - prod S_i) (§3.4).

The efficient estimator, the policies and the simulator live in ``reference.klink``.
Interpretation choices are recorded in each module and in ``docs/klink.md``.
"""
