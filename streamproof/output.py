"""Helpers shared by the sub-commands: JSON output on stdout."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(value: Any) -> None:
    """Print ``value`` as one JSON document on stdout (machine-readable ``--json`` output)."""
    sys.stdout.write(json.dumps(value, indent=2) + "\n")
