"""Sub-commands of ``streamproof``.

Each module here defines ``register(subparsers) -> None``, which adds one sub-command whose
parser sets ``handler=<function taking argparse.Namespace, returning an exit code>``.
Modules are discovered by name, so adding a command never touches a shared file. Every
command module is imported by ``streamproof --help``: an import that would load more than the
CLI's start loads (the command's own code, and pyspark, z3, hypothesis through it) stays inside
the handler, marked ``# noqa: PLC0415 - <reason>``, so that ``--help`` stays fast.
"""
