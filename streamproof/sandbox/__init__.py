"""The sandbox in which ``streamproof check-dgs`` runs a user's program.

The user's code (its import, every callback, the draws from its ``events()`` strategy, the
declarations of the rich form) runs in a child process, never in the CLI's: the child loads
and checks the program with the checker's public entry points and sends back the verdict; the
parent enforces a per-call and a total time limit, captures what the program prints, shows a
progress bar, and turns every way the user's code can misbehave (an infinite loop,
``sys.exit``, ``KeyboardInterrupt``, a ``RecursionError``, an exception whose ``str()`` raises,
dying) into a one-line bad-input error (exit 2) that names the callback.

* :mod:`~streamproof.sandbox.runner` - the parent: start, watch, limits, verdict;
* :mod:`~streamproof.sandbox.child` - the child process's entry point;
* :mod:`~streamproof.sandbox.check` - what the child computes (load, check, render);
* :mod:`~streamproof.sandbox.guard` - wrapping every call into user code;
* :mod:`~streamproof.sandbox.blame` - whose fault an escaped exception is, where a stuck program was;
* :mod:`~streamproof.sandbox.beacon` - the shared record of what the child is doing;
* :mod:`~streamproof.sandbox.captured` - the program's stdout / stderr for the report.
"""
