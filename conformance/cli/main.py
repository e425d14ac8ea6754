"""Entry point of the ``streamproof`` command.

Exit codes (a contract shared by every sub-command):

* 0 - success / the property checked holds,
* 1 - the property checked does not hold (a counterexample was printed),
* 2 - bad input (one line on stderr naming the problem and where it is),
* 3 - internal error of streamproof itself (one line; set ``STREAMPROOF_DEBUG=1`` for the
  traceback), 130 - interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import traceback
from typing import Callable, NoReturn, Sequence

from spec.errors import InputError
import conformance.cli.commands as commands_package

Handler = Callable[[argparse.Namespace], int]

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit 2 like every other bad input."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every module of ``conformance.cli.commands`` registered."""
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``streamproof`` with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    prog = f"streamproof {args.command}"
    try:
        return handler(args)
    except InputError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
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
            f"{prog}: internal error: {type(error).__name__}: {error} "
            "(a bug in streamproof; rerun with STREAMPROOF_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
