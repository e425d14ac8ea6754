"""A real Spark standalone cluster on 127.0.0.1 (issue 15): :mod:`.standalone` starts and
stops it, :mod:`.processes` does the process-group bookkeeping, :mod:`.probe` runs inside
executors to report where tasks ran, :mod:`.job` is the conformance-checked driver script."""
