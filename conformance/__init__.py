"""The differential conformance harness: ``spark_impl`` against ``reference``, judged by
oracles named after the papers' definitions. The ``streamproof`` command that fronts it lives
in the top-level ``streamproof`` package."""
