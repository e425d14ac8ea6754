"""Where the live DGS front end's late-event names were first published; they now live in
:mod:`spark_impl.lateness`, the one lateness module of the O+ and DGS front ends (same policies,
same default ``"fail"``). Kept so that ``from spark_impl.dgs.streaming_late import
LateEventError`` (the documented import) keeps working."""

from __future__ import annotations

from spark_impl.lateness import POLICIES as NAMED
from spark_impl.lateness import LateEvent, LateEventError, LatePolicy, check_allowed_lateness
from spark_impl.lateness import LateParquet as LateParquetPath
from spark_impl.lateness import late_policy as parse_late_policy

__all__ = ["NAMED", "LateEvent", "LateEventError", "LateParquetPath", "LatePolicy", "check_allowed_lateness",
           "parse_late_policy"]
