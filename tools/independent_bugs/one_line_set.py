"""Writing a set of one-line bugs (sets C and D): each bug replaces one exact, unique snippet of
a file at HEAD, so a patch that no longer applies fails loudly instead of patching something
else. A set's ``generate.py`` holds only its table and calls :func:`write_set`."""

from __future__ import annotations

import difflib
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: (name, file, old snippet, new snippet, what a developer got wrong)
Bug = tuple[str, str, str, str, str]


def patch_of(file: str, old: str, new: str) -> str:
    """The unified diff (3 lines of context) replacing the unique ``old`` by ``new`` in ``file``
    at HEAD."""
    text = subprocess.run(["git", "show", f"HEAD:{file}"], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout
    if text.count(old) != 1:
        raise SystemExit(f"{file}: the snippet occurs {text.count(old)} times: {old!r}")
    after = text.replace(old, new)
    lines = difflib.unified_diff(text.splitlines(keepends=True), after.splitlines(keepends=True),
                                 f"a/{file}", f"b/{file}", n=3)
    return f"diff --git a/{file} b/{file}\n" + "".join(lines)


def write_set(folder: Path, header: list[str], what_column: str, bugs: list[Bug]) -> int:
    """Write ``NN-name.patch`` for every bug and ``INDEX.md`` (``header`` lines, then the table)
    into ``folder``."""
    rows = [*header, f"| bug | file | {what_column} |", "|---|---|---|"]
    for name, file, old, new, what in bugs:
        (folder / f"{name}.patch").write_text(patch_of(file, old, new), encoding="utf-8")
        rows.append(f"| {name} | {file} | {what} |")
    (folder / "INDEX.md").write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"{len(bugs)} patches in {folder}")
    return 0
