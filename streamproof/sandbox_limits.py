"""What the commands that run a user's DGS program in the sandbox (``check-dgs``,
``dgs-plan``) share: the time and memory limit flags, their validation, and running a request
and printing its report."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import TYPE_CHECKING, Any

from streamproof.output import print_json
from spec.errors import InputError

if TYPE_CHECKING:  # the sandbox imports hypothesis and the executors: only when a command runs
    from streamproof.sandbox.check import Request
    from streamproof.sandbox.plan_task import PlanRequest
    from streamproof.sandbox.runner import Limits

DEFAULT_CALL_TIMEOUT = 10.0
DEFAULT_TIMEOUT = 600.0
DEFAULT_MEMORY_MB = 4096
MIN_MEMORY_MB = 256  # below this, Python and hypothesis themselves do not start


def add_limit_arguments(parser: Any, whole: str = "check") -> None:
    """``--call-timeout``, ``--timeout`` and ``--memory-limit``; ``whole`` names what
    ``--timeout`` bounds in the help ("check", "run")."""
    parser.add_argument(
        "--call-timeout", type=float, default=DEFAULT_CALL_TIMEOUT, metavar="SECONDS",
        help="time limit of one call into the program (a callback, its import, reading its "
        f"members; default {DEFAULT_CALL_TIMEOUT:g})",
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
        help=f"time limit of the whole {whole} (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--memory-limit", type=int, default=DEFAULT_MEMORY_MB, metavar="MB",
        help=f"address-space limit of the process running the program (default {DEFAULT_MEMORY_MB})",
    )


def limits_from_args(args: argparse.Namespace) -> tuple[Limits, int]:
    """The sandbox's :class:`~streamproof.sandbox.runner.Limits` and the memory limit in
    MB; an InputError for a non-positive time or a memory limit below :data:`MIN_MEMORY_MB`."""
    from streamproof.sandbox.runner import Limits  # noqa: PLC0415 - loads hypothesis (via reference.dgs.strategies)

    limits = Limits(_seconds(args.call_timeout, "--call-timeout"), _seconds(args.timeout, "--timeout"))
    if not MIN_MEMORY_MB <= args.memory_limit <= 2**40:
        raise InputError(f"--memory-limit must be at least {MIN_MEMORY_MB} (MB), got {args.memory_limit}")
    return limits, int(args.memory_limit)


def _seconds(value: float, flag: str) -> float:
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{flag} must be a positive number of seconds, got {value:g}")
    return value


def run_and_print(request: Request | PlanRequest, limits: Limits, *, as_json: bool, progress: bool) -> bool:
    """Run ``request`` in the sandbox and print its report (``as_json``: one JSON document
    with what the program printed under ``"output"``); whether it holds. With
    ``STREAMPROOF_DEBUG`` set, a bug's traceback goes to stderr."""
    from streamproof.sandbox.runner import InternalError, run_check  # noqa: PLC0415 - loads hypothesis (via reference.dgs.strategies)

    try:
        verdict = run_check(request, limits, progress=progress)
    except InternalError as error:
        if os.environ.get("STREAMPROOF_DEBUG"):
            print(error.detail, file=sys.stderr)
        raise
    if as_json:
        print_json({**verdict.document, "output": verdict.output.to_json()})
    else:
        for line in verdict.lines + verdict.output.lines():
            print(line)
    return verdict.consistent
