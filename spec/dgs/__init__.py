"""DGS: fork/join stream programs with dependency-guided synchronization (paper 001, Flumina).

Modules, one definition each:

* :mod:`spec.dgs.program`     - programs (DGS Def. 2.1): tags, dependence, state types with
  predicates, update/out, forks and joins; every call into user code is guarded;
* :mod:`spec.dgs.loader`      - loading a user's ``file.py:NAME`` into a :class:`Program`
  (simple one-state form and the richer multi-state-type form);
* :mod:`spec.dgs.semantics`   - the sequential spec and wire diagrams (Def. 2.2, Thm. 2.4);
* :mod:`spec.dgs.consistency` - consistency C1-C3 (Def. 2.3) and the domain they quantify over;
* :mod:`spec.dgs.plan`        - synchronization plans (Def. 3.1) and their JSON form;
* :mod:`spec.dgs.validity`    - P-validity V1, V2 (Def. 3.2);
* :mod:`spec.dgs.streams`     - input streams, valid input instances (Def. 3.3), sort,
  correctness (Def. 3.4);
* :mod:`spec.dgs.mailbox`     - the release rule of selective reordering (§3.4).

The interpretation choices (what C1-C3 quantify over, tags as predicates, the order on
events, heartbeats) are written in each module and collected in ``docs/dgs.md``.
"""
