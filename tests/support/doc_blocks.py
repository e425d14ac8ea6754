"""The script blocks of a documentation page: fenced ``python`` blocks whose first line is
``# <name>.py: ...``, which tests copy out and run as written."""

from __future__ import annotations

import ast
import importlib
import re

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
