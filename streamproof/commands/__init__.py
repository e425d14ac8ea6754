"""Sub-commands of ``streamproof``.

Each module here defines ``register(subparsers) -> None``, which adds one sub-command whose
parser sets ``handler=<function taking argparse.Namespace, returning an exit code>``.
Modules are discovered by name, so adding a command never touches a shared file. Keep the
imports of heavy libraries (pyspark, z3) inside the handler so ``streamproof --help`` is fast.
"""
