"""Is bad input refused? The one helper of the suite's Spark-free contract checks
(the Fries, DGS and O+ tests of ``tests/spark_impl/``): a call given bad input must raise ``InputError`` (the
CLI's one-line error, exit 2) - not be accepted, not crash with another exception."""

from __future__ import annotations

from typing import Any, Callable

from spec.errors import InputError


def refused(call: Callable[[], Any], where: str | None, what: str, words: str | None = None) -> str | None:
    """None when ``call()`` raises InputError located at ``where`` (a prefix; None: anywhere)
    whose line mentions ``words`` (None: any); else the problem, naming the call ``what``."""
    try:
        call()
    except InputError as error:
        if where is not None and not (error.where or "").startswith(where):
            return f"{what} was refused at {error.where!r}, expected at {where!r}"
        if words is not None and words not in str(error):
            return f"{what} was refused, but not for {words!r}: {error}"
        return None
    except Exception as error:  # noqa: BLE001 - a crash instead of a refusal is a finding
        return f"{what} raised {type(error).__name__}: {error} (expected InputError)"
    return f"{what} was accepted"
