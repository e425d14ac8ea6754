"""The ``streamproof`` command-line tool: one module per sub-command in
:mod:`streamproof.commands`, discovered automatically; the sandbox in which ``check-dgs`` and
``dgs-plan`` run a user's program (:mod:`streamproof.sandbox`).

This package is the top of the import order: it may import every other package of the
product (``spec``, ``reference``, ``proofs``, ``spark_impl``, ``conformance``); none of them
imports it."""
