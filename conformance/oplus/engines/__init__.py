"""The ways into the O+ engines under test, one module per way in (the Structured Streaming front
end :mod:`.live`).

Not here: oracles and suite orchestration.
"""
