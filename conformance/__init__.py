"""The differential conformance suite (``spark_impl`` against ``reference``) and the
``streamproof`` command-line tool (``conformance.cli``)."""
