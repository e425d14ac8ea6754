"""Running an engine call with a time limit.

An engine that never returns (a reconfiguration that never completes, a stream that never
drains) is a liveness failure, and the suite must report it rather than hang with it. The
call runs in a daemon thread; if it has not finished after ``timeout_s`` the caller gets
``(False, None)`` and moves on. The thread cannot be killed: the caller is expected to treat
the engine as unusable afterwards (see :class:`conformance.fries.engines.SparkEngine`), and a
daemon thread does not keep the process alive at exit.
"""

from __future__ import annotations

import threading
from typing import Callable, TypeVar

T = TypeVar("T")


def call_with_timeout(fn: Callable[[], T], timeout_s: float) -> tuple[bool, T | None]:
    """``(True, fn())`` if ``fn`` returns within ``timeout_s`` seconds (its exception is
    re-raised), else ``(False, None)``."""
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = error

    thread = threading.Thread(target=work, name="streamproof-engine-call", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        return False, None
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return True, box.get("value")  # type: ignore[return-value]
