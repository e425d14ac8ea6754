"""Efficient Enorm fusion: Alg. 1 with union-find (``greedy``), the §7.6 baseline
(``baseline``) and the §7 random "large job" generator (``random_jobs``). Verified against
``spec.fusion`` by tests/test_fusion_*.py."""
