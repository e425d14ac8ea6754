"""Workloads built on the executor's user-operator API: the fraud-detection pipeline of Fries
Fig. 1 (``streamproof demo``) and the backlogged benchmark (``streamproof bench``)."""
