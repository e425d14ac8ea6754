"""The differential conformance harness: ``spark_impl`` against ``reference``, cases x engines
x oracles -> verdicts, with oracles named after the papers' definitions.

Layout, imports pointing down the list (no family imports another):

* :mod:`.core` - suite-independent pieces (results, cases, crash and hang isolation, shrinking,
  saved cases, the matcher, the shared SparkSession, progress); imports nothing else from here;
* :mod:`.standin` - the pure-Python Spark stand-in the Spark-free checks run on;
* :mod:`.fries`, :mod:`.dgs`, :mod:`.oplus` - one family each, the same shape: cases, oracles,
  ``engines/`` (one module per way into the engine under test), ``checks/`` (the suite's
  further checks) and ``suite`` (orchestration only);
* :mod:`.userjob` - a user's own job against the reference (``streamproof conformance --job``);
* :mod:`.run` - picks suites and engines (the only module importing every family), and
  :mod:`.replay` - replays a saved case of any suite (imported by the generated regression tests);
* :mod:`.output` (report, plots, coverage, vectors), :mod:`.testing` (what users' CI imports;
  also as :mod:`.pytest_helper` and :mod:`.pytest_plugin`, the documented entry points) and
  :mod:`.cluster` (a standalone cluster and the nemesis).

Not here: the ``streamproof`` command that fronts the harness (the top-level ``streamproof``
package) and the project's own tests.
"""
