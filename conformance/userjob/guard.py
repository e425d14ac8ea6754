"""Every call into a user job's code, guarded: the user's faults are named as the user's.

:class:`GuardedLogic` wraps an operator's logic (and :class:`GuardedTransform` a state
transformation) so that a call

* that raises - any exception, ``SystemExit``, ``KeyboardInterrupt`` and ``GeneratorExit``
  included - becomes a :class:`UserCodeError` naming the operator, the call and its
  arguments (``FD2.process(state=[...], key='m3', value=(...)) raised ZeroDivisionError: ...``).
  On a Spark executor it travels inside Spark's exception text; the suite recognises it there
  (:func:`user_error_in`) - a user's exception is a failing *case* (oracle ``user-code``, exit
  1), never an engine crash or an internal error;
* prints into a buffer instead of the process's stdout / stderr: on the driver (the reference
  runs) the buffer is kept and reported with the case (:func:`captured_output`), so ``--json``
  stays one JSON object; on executors it is dropped (the same functions print the same things
  in the reference run);
* is recorded as the call in progress (:func:`current_call`), so a reference run that does not
  return within its time limit names the call that hung.

The wrappers are plain picklable dataclasses; the user's logic inside them is pickled by value
(:mod:`conformance.userjob.load`).
"""

from __future__ import annotations

import contextlib
import io
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from spec.errors import cut

from conformance.core.watchdog import Abandoned

from spark_impl.reconfig.model import Emitted, OperatorLogic

_CURRENT: dict[int, list[str]] = {}
_OUTPUT = io.StringIO()
_KEEP = 4000


class UserCodeError(Exception):
    """The user's code raised; the message names the call (module docstring)."""


_PATTERN = re.compile(r"UserCodeError: (.*)")


def user_error_in(text: str) -> str | None:
    """The message of a :class:`UserCodeError` named in ``text`` (e.g. Spark's exception
    text from an executor), else None."""
    found = _PATTERN.findall(text)
    return found[-1].strip() if found else None


def current_call(thread: int) -> str:
    """The user call in progress in thread ``thread`` ('' when none)."""
    calls = _CURRENT.get(thread)
    return calls[-1] if calls else ""


def captured_output(clear: bool = True) -> str:
    """What the user's code printed in this process since the last call (last characters)."""
    text = _OUTPUT.getvalue()
    if clear:
        _OUTPUT.seek(0)
        _OUTPUT.truncate()
    return text[-_KEEP:]


def _show(value: Any) -> str:
    try:
        return cut(repr(value), 120)
    except Exception:  # noqa: BLE001 - a user's __repr__ may raise
        return f"<{type(value).__name__}>"


@contextlib.contextmanager
def _guarded(call: str) -> Iterator[None]:
    calls = _CURRENT.setdefault(threading.get_ident(), [])
    calls.append(call)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield
    except (UserCodeError, Abandoned):  # Abandoned: the watchdog stopping a hung call, not the user's
        raise
    except BaseException as error:  # noqa: BLE001 - the user's, SystemExit / KeyboardInterrupt included
        try:
            message = f"{type(error).__name__}: {error}"
        except Exception:  # noqa: BLE001 - str() of it raises too
            message = type(error).__name__
        raise UserCodeError(cut(f"{call} raised {message}", 600).replace("\n", " ")) from None
    finally:
        calls.pop()
        if sink.tell():
            _OUTPUT.write(sink.getvalue()[-_KEEP:])
            if _OUTPUT.tell() > 4 * _KEEP:
                kept = _OUTPUT.getvalue()[-_KEEP:]
                _OUTPUT.seek(0)
                _OUTPUT.truncate()
                _OUTPUT.write(kept)


@dataclass(frozen=True)
class GuardedLogic:
    """An operator's logic with every call guarded (module docstring)."""

    operator: str
    inner: OperatorLogic

    def process(self, state: Any, key: Any, value: Any) -> tuple[Any, Emitted]:
        """The user's process, guarded."""
        with _guarded(f"{self.operator}.process(state={_show(state)}, key={_show(key)}, value={_show(value)})"):
            new_state, emitted = self.inner.process(state, key, value)
            return new_state, list(emitted)

    def flush(self, state: Any, key: Any) -> Emitted:
        """The user's flush, guarded."""
        with _guarded(f"{self.operator}.flush(state={_show(state)}, key={_show(key)})"):
            return list(self.inner.flush(state, key))


@dataclass(frozen=True)
class GuardedTransform:
    """A state transformation T_O with every call guarded."""

    operator: str
    request: str
    inner: Callable[[Any], Any]

    def __call__(self, state: Any) -> Any:
        with _guarded(f"the state transformation of {self.operator} in {self.request} (state={_show(state)})"):
            return self.inner(state)
