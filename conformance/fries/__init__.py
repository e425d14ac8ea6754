"""The Fries part of the differential suite: engines under test, oracles (a)-(c), the suite.

Import submodules directly (``conformance.fries.oracles``, ``conformance.fries.engines.catalogue``,
``conformance.fries.suite``); nothing heavy is imported here.
"""
