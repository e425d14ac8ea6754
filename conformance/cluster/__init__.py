"""A real Spark standalone cluster on 127.0.0.1 and the nemesis that breaks it:
:mod:`.standalone` starts and stops it, :mod:`.processes` does the process-group bookkeeping,
:mod:`.probe` runs inside executors to report where tasks ran, :mod:`.job` is the
conformance-checked driver script; the ``nemesis_*`` modules inject faults (kills, pauses) into
a running cluster and judge every round with the suites' own oracles.

Not here: the suites themselves (the families) and the ``streamproof cluster`` command.
"""
