"""The script blocks of a documentation page: fenced ``python`` blocks whose first line is
``# <name>.py: ...``, which tests copy out and run as written, and the steps of a page run in one
session (``# <page>: <step>``, each with the output the page shows under it)."""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass

BLOCK = re.compile(r"^```python\n(# ([\w.]+\.py): [^\n]*\n.*?)^```", re.S | re.M)


def doc_scripts(path: str) -> dict[str, str]:
    """``{file name: code}`` of every script block of the page at ``path`` (a name twice is an
    error)."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    found: dict[str, str] = {}
    for code, name in BLOCK.findall(text):
        assert name not in found, f"{path} has two blocks named {name}"
        found[name] = code
    return found


def assert_compiles_and_imports_exist(name: str, code: str) -> None:
    """``code`` compiles and every name it imports exists."""
    tree = ast.parse(code, name)
    compile(tree, name, "exec")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name), f"{name}: {node.module} has no {alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                importlib.import_module(alias.name)


@dataclass(frozen=True)
class DocStep:
    """One step of a page run in one session: a fenced ``python`` block whose first line is
    ``# <page>: <name>``, and the fenced ``text`` block right after it (what the step prints,
    and the log lines it shows as ``LEVEL logger message``), if there is one."""

    name: str
    code: str
    shown: str | None


def doc_steps(path: str, page: str) -> list[DocStep]:
    """The steps of the page at ``path`` whose blocks start with ``# <page>: <name>``, in page
    order (a name twice is an error)."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    pattern = re.compile(r"^```python\n(# " + re.escape(page) + r": ([\w-]+)\n.*?)^```\n(?:\n```text\n(.*?)^```)?",
                         re.S | re.M)
    steps = [DocStep(name, code, shown or None) for code, name, shown in pattern.findall(text)]
    names = [s.name for s in steps]
    assert len(names) == len(set(names)), f"{path} has a step name twice: {names}"
    return steps
