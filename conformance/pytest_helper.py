"""The documented entry point for judging a Spark run in a user's own test:
``from conformance.pytest_helper import assert_conforms``.

The code lives in :mod:`conformance.testing.helper`; this module keeps the documented import
path stable.
"""

from conformance.testing.helper import assert_conforms, assert_job_conforms, request_order

__all__ = ["assert_conforms", "assert_job_conforms", "request_order"]
