"""What users' own test suites import: the pytest helper (:mod:`.helper`) and plugin
(:mod:`.plugin`), also importable under their documented paths
:mod:`conformance.pytest_helper` and :mod:`conformance.pytest_plugin`.

Not here: the project's own tests.
"""
