"""The ``streamproof`` command-line tool: one module per sub-command in
``conformance.cli.commands``, discovered automatically."""
