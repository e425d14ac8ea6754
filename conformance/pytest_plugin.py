"""The streamproof pytest plugin, registered under this import path (entry point ``pytest11``
``streamproof = "conformance.pytest_plugin"``): fixtures ``streamproof_spark`` and
``streamproof_oracle``.

The code lives in :mod:`conformance.testing.plugin`; pytest collects the fixtures from this
module's names, so re-exporting them here is the whole plugin.
"""

from conformance.testing.plugin import Oracle, streamproof_oracle, streamproof_spark

__all__ = ["Oracle", "streamproof_oracle", "streamproof_spark"]
