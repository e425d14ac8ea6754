"""streamproof's efficient pure-Python reference model.

Checkers, schedulers, simulators and executors, each verified against ``spec/`` with
hypothesis properties. Users may import it as an oracle in their own CI.
"""
