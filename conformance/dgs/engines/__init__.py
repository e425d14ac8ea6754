"""The ways into the DGS engines under test, one module per way in (the Structured Streaming
front end :mod:`.live` and its re-plans :mod:`.replan`).

Not here: oracles and suite orchestration.
"""
