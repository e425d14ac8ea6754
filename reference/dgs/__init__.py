"""DGS reference model (paper 001): checkers, plan optimizer, mailboxes, plan executor.

* :mod:`reference.dgs.checker`   - C1-C3 checked with hypothesis (``streamproof check-dgs``);
* :mod:`reference.dgs.domain`    - drawing instances of C1-C3's domain;
* :mod:`reference.dgs.report`    - counterexamples in words and JSON;
* :mod:`reference.dgs.validity`  - P-validity V1, V2 with clear errors;
* :mod:`reference.dgs.optimizer` - the greedy plan optimizer of Appendix B;
* :mod:`reference.dgs.mailbox`   - selective reordering with heartbeats (§3.4);
* :mod:`reference.dgs.executor`  - ``run_plan``: a deterministic, seeded simulation of a plan's
  workers, mailboxes, per-stream delays and heartbeats;
* :mod:`reference.dgs.strategies` - hypothesis strategies of valid plans and input instances;
* :mod:`reference.dgs.examples`  - the shipped example programs.

The program loader and the sequential spec live in ``spec.dgs`` (``load_program``,
``spec_output``) so that ``spark_impl`` - which may not import ``reference`` - can use them.
"""
