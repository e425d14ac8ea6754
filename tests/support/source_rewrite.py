"""A function or method compiled from its production source with one piece of text replaced.

The tests that use these rewrite production source text, which the test rules forbid: a
reformat of the module breaks them although no behaviour changed. They are the known
exceptions listed in ``tests/README.md``, to be converted into tests of documented promises
(or oracles tested on hand-built bad runs); no new test uses this module.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
from types import ModuleType
from typing import Any


def rewritten_member(module: ModuleType, owner: Any, name: str, old: str, new: str,
                     filename: str | None = None) -> Any:
    """``owner.name`` (a method of a class, or a function of a module) compiled from its source
    with ``old`` replaced by ``new``, in a copy of ``module``'s globals. ``old`` must occur
    exactly once, so a changed source fails loudly instead of rewriting nothing."""
    source = textwrap.dedent(inspect.getsource(getattr(owner, name)))
    assert source.count(old) == 1, old
    namespace = dict(vars(module))
    where = filename or module.__file__ or "<rewritten>"
    exec(compile(source.replace(old, new), where, "exec"), namespace)  # noqa: S102
    return namespace[name]


def rewritten_function(module: ModuleType, name: str, old: str, new: str) -> Any:
    """Function ``module.name`` rewritten as :func:`rewritten_member` says."""
    return rewritten_member(module, module, name, old, new)


def rewritten_method(cls: type, name: str, old: str, new: str) -> Any:
    """Method ``cls.name`` rewritten as :func:`rewritten_member` says, in the globals of the
    module that defines ``cls``."""
    return rewritten_member(sys.modules[cls.__module__], cls, name, old, new, filename="<rewritten>")
