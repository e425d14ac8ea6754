"""Entry point of the ``streamproof`` command.

Exit codes (a contract shared by every sub-command):

* 0 - success / the property checked holds,
* 1 - the property checked does not hold (a counterexample was printed),
* 2 - bad input (one line on stderr naming the problem and where it is; line breaks and
  control characters in it are escaped),
* 3 - internal error of streamproof itself (one line; set ``STREAMPROOF_DEBUG=1`` for the
  traceback), 130 - interrupted (Ctrl-C), 128 + N - terminated by signal N (``SIGTERM`` 143,
  ``SIGHUP`` 129): the signal unwinds the command like Ctrl-C does, so what it started is
  stopped and its temporary files are removed, and one stderr line says so.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import pkgutil
import signal
import sys
import traceback
from types import FrameType
from typing import Any, Callable, Iterator, NoReturn, Sequence

from contextlib import contextmanager

from spec.errors import InputError, cut, one_line
import streamproof.commands as commands_package

Handler = Callable[[argparse.Namespace], int]

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit 2 like every other bad input."""

    def error(self, message: str) -> NoReturn:
        _safe_streams()
        self.exit(EXIT_BAD_INPUT,
                  one_line(f"{self.prog}: error: {message} (see '{self.prog} --help')") + "\n")


def _safe_streams() -> None:
    """Printing never fails on a lone surrogate (valid in JSON strings, not encodable in
    UTF-8): stdout and stderr escape what they cannot encode."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


class Terminated(BaseException):
    """A termination signal arrived (``signum``); raised in the main thread so that every
    ``finally`` and ``with`` on the way out runs (a ``BaseException``: no ``except
    Exception`` stops it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


TERMINATING = (signal.SIGTERM, signal.SIGHUP)


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextmanager
def _terminations_unwind() -> Iterator[None]:
    """While the command runs, ``SIGTERM`` and ``SIGHUP`` raise :class:`Terminated` (in the
    main thread only: elsewhere Python cannot set handlers; the previous ones come back)."""
    previous: dict[int, Any] = {}
    try:
        for signum in TERMINATING:
            previous[signum] = signal.signal(signum, _raise_terminated)
    except ValueError:  # not the main thread
        pass
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)


def _describe(error: BaseException) -> str:
    """``str(error)``, cut to 500 characters; never raises (a value's ``__str__`` may)."""
    try:
        return cut(str(error), 500)
    except Exception:  # noqa: BLE001
        return "(its message cannot be printed)"


def _name_for_errors(parser: argparse.ArgumentParser) -> None:
    """Every (nested) sub-command's parser records its full name (``streamproof simulate
    klink``) so that its errors carry the same prefix as argparse's usage errors."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                child.set_defaults(error_prefix=child.prog)
                _name_for_errors(child)


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every module of ``streamproof.commands`` registered."""
    parser = _Parser(
        prog="streamproof",
        description="Check, simulate and run consistent stream processing "
        "(Fries, DGS, STRETCH O+, Enorm, Klink).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for info in sorted(pkgutil.iter_modules(commands_package.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands_package.__name__}.{info.name}")
        module.register(sub)
    _name_for_errors(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``streamproof`` with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    _safe_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        print(f"{parser.prog}: error: expected a COMMAND (see '{parser.prog} --help')",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    prog = getattr(args, "error_prefix", None) or f"streamproof {args.command}"
    try:
        with _terminations_unwind():
            return handler(args)
    except Terminated as stop:
        print(f"{prog}: terminated by {stop}; stopped what it had started and removed its temporary files",
              file=sys.stderr)
        return 128 + stop.signum
    except InputError as error:
        print(one_line(f"{prog}: error: {error}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as error:  # noqa: BLE001 - the CLI never shows a raw traceback
        if os.environ.get("STREAMPROOF_DEBUG"):
            traceback.print_exc()
        print(
            one_line(f"{prog}: internal error: {type(error).__name__}: {_describe(error)} "
                     "(a bug in streamproof; rerun with STREAMPROOF_DEBUG=1 for the traceback)"),
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
