"""The reference as an oracle for users' own jobs: ``streamproof conformance --job``.

* :mod:`~conformance.userjob.load` - ``FILE.py:NAME``: the user's job, requests, dependence;
* :mod:`~conformance.userjob.cases` - one case (tuples, request moments, pacing), drawn and shrunk;
* :mod:`~conformance.userjob.guard` - every call into the user's code, guarded and named;
* :mod:`~conformance.userjob.engine` - the reference run, then the batch on Spark;
* :mod:`~conformance.userjob.judge` - the oracles (C1-C3 with the user's functions);
* :mod:`~conformance.userjob.suite` - draw, run, judge, shrink, save, replay.

The serial executor itself is :mod:`reference.fries.userjob` (it reads a job through the
protocols of :mod:`spec.fries.userjob`, so ``spark_impl`` and ``reference`` stay independent).
Not here: the catalogue suites (the families), which this package reuses (Fries oracles, shrink
moves, the scenario codec) but never extends.
"""
