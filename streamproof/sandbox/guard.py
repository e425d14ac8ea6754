"""The child's :class:`~spec.dgs.loader.Monitor`: every call into user code, marked and guarded.

Each user function the loader hands over is wrapped so that a call

* marks the shared record (:mod:`streamproof.sandbox.beacon`): the parent sees which
  function runs since when, and kills the child when one call exceeds its limit (a call on the
  prover's symbolic values is marked as the prover's time: Z3 solves inside it);
* turns what the checker must not see into the user program's fault:

  - a ``BaseException`` that is not an ``Exception`` (``SystemExit``, ``KeyboardInterrupt``,
    ``GeneratorExit``, ...) and a ``RecursionError`` or ``MemoryError`` become a
    :class:`UserAbort`, which ends the check at once (hypothesis lets such exceptions through
    without replaying them; a ``RecursionError`` depends on the stack depth, so a replay
    could pass and hypothesis would call the program "not deterministic");
  - an exception whose ``str()`` raises becomes a :class:`~spec.dgs.program.UserCodeError`;
  - any other exception passes unchanged, so :func:`spec.dgs.program.call_user` names it as
    before and the prover (``proofs.dgs``) can still fall back to testing when the user's code
    cannot run on symbolic values.

The ``events()`` strategy is wrapped the same way around each draw, except that hypothesis's
own control flow (``StopTest``, ``UnsatisfiedAssumption``, ...) passes through.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, contextmanager
from typing import Any, Callable, Iterator

from streamproof.sandbox.beacon import MIXED, OURS, USER, Writer
from spec.dgs.program import UserCodeError, args_text, describe_error

# packages whose exceptions raised through user code are ours (the prover's symbolic values
# raise them inside the user's functions), never the user's
_OURS = ("spec.", "reference.", "proofs.", "conformance.", "z3")
SYMBOLIC = " (symbolically)"
STRATEGY = "events() strategy"  # the end of the label the loader gives the strategy


class UserAbort(BaseException):
    """The user's code did something that ends the check at once; ``error`` says what, as the
    one line the CLI prints. A ``BaseException`` so that neither hypothesis nor the checker
    catches it on its way to the child's top level."""

    def __init__(self, error: UserCodeError) -> None:
        super().__init__(str(error))
        self.error = error


class SandboxMonitor:
    """Implements :class:`spec.dgs.loader.Monitor` on a :class:`Writer`."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self._fault: tuple[BaseException, str] | None = None

    def running(self, label: str) -> AbstractContextManager[None]:
        """User code runs inside, with libraries' (the import, reading the members);
        ``label`` says what."""
        return self._activity(label, MIXED)

    def phase(self, label: str) -> AbstractContextManager[None]:
        """streamproof's own work."""
        return self._activity(label, OURS)

    def where_raised(self, error: BaseException) -> str | None:
        """The innermost activity ``error`` escaped from, or None if it escaped from none."""
        return self._fault[1] if self._fault is not None and self._fault[0] is error else None

    @contextmanager
    def _activity(self, label: str, kind: int) -> Iterator[None]:
        previous = self.writer.enter(label, kind)
        try:
            yield
        except BaseException as error:
            if self._fault is None or self._fault[0] is not error:
                self._fault = (error, label)
            raise
        finally:
            self.writer.leave(previous)

    def function(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` marked and guarded (see the module docstring)."""
        writer = self.writer

        def guarded(*args: Any) -> Any:
            previous = writer.enter(label, USER) if not _symbolic(args) else writer.enter(label + SYMBOLIC, MIXED)
            try:
                return fn(*args)
            except Exception as error:  # noqa: BLE001 - sorted below
                replacement = _sorted(label, error, args)
                if replacement is error:
                    raise
                raise replacement from None
            except BaseException as error:  # noqa: BLE001 - SystemExit, KeyboardInterrupt...
                if isinstance(error, UserAbort):
                    raise
                raise _abort(label, error, args) from None
            finally:
                writer.leave(previous)

        guarded.__name__ = getattr(fn, "__name__", "guarded")
        return guarded

    def strategy(self, label: str, strategy: Any) -> Any:
        """``strategy`` with each draw marked and guarded (hypothesis is imported here, not at
        module level: the parent process imports this module's labels and never draws)."""
        from hypothesis import errors as hypothesis_errors
        from hypothesis import strategies as st

        # exceptions of hypothesis that mean "this draw is over / rejected", not "the strategy
        # is broken"
        control = (
            hypothesis_errors.StopTest,
            hypothesis_errors.UnsatisfiedAssumption,
            hypothesis_errors.Frozen,
            hypothesis_errors.BackendCannotProceed,
            hypothesis_errors.Flaky,
        )
        writer = self.writer

        @st.composite
        def guarded(draw: Callable[[Any], Any]) -> Any:
            # hypothesis's own work (e.g. building its character tables) happens inside a draw,
            # so a draw is not timed as one call; the parent's stack dumps still stop the
            # program's own code (a map or filter function) stuck there
            previous = writer.enter(label, MIXED)
            try:
                return draw(strategy)
            except control:
                raise
            except Exception as error:  # noqa: BLE001 - the user's strategy may raise anything
                if _is_ours(error):
                    raise
                raise UserCodeError(label, f"raised {describe_error(error)} while drawing an event") from None
            except BaseException as error:  # noqa: BLE001 - SystemExit, KeyboardInterrupt...
                if isinstance(error, UserAbort):
                    raise
                raise _abort(label, error, ()) from None
            finally:
                writer.leave(previous)

        return guarded()


def _symbolic(args: tuple[Any, ...]) -> bool:
    """True when the prover calls the user's function on symbolic values (``proofs.dgs``):
    its Z3 queries then run inside the call, so the call is not held to the per-call limit
    (the parent still stops it if a stack dump shows the user's own code stuck)."""
    for arg in args:
        inner = arg.values() if isinstance(arg, dict) else arg if isinstance(arg, (tuple, list)) else ()
        for value in (arg, *inner):
            if type(value).__module__.startswith("proofs."):
                return True
    return False


def _is_ours(error: BaseException) -> bool:
    module = type(error).__module__
    if module.startswith(_OURS):
        return True
    if not module.startswith("hypothesis"):
        return False
    from hypothesis import errors as hypothesis_errors  # loaded already: the error is one of its

    return not isinstance(error, (hypothesis_errors.InvalidArgument, hypothesis_errors.InvalidDefinition))


def _abort(label: str, error: BaseException, args: tuple[Any, ...]) -> UserAbort:
    called = f" (called with {args_text(args)})" if args else ""
    return UserAbort(UserCodeError(label, f"raised {describe_error(error)}{called}"))


def _sorted(label: str, error: Exception, args: tuple[Any, ...]) -> BaseException:
    """What a guarded call raises for the user's ``error`` (see the module docstring)."""
    if _is_ours(error):
        return error
    if isinstance(error, (RecursionError, MemoryError)):
        return _abort(label, error, args)
    try:
        str(error)
    except Exception:  # noqa: BLE001 - a broken __str__
        return UserCodeError(label, f"raised {describe_error(error)} (called with {args_text(args)})")
    return error
