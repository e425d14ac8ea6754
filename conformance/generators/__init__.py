"""Hypothesis strategies for the differential suite, importable by users' own tests.

``fries`` draws random Fries scenarios (dataflows, functions, sources, reconfigurations);
``timing`` adds delay, straggler, control-message and restart profiles.
"""
