"""The shape of a vector directory, checked before ``vectors check`` replays it.

:func:`conformance.output.vectors.check` reads the members it needs (``scenario``, ``expected``,
``reference_run.outputs``) directly; a hand-edited or hostile vector missing one, or with a
value of the wrong type, made it fail with ``KeyError`` / ``TypeError`` (exit 3). Here every
member it reads is validated first, so such a vector is one bad-input line naming the file and
the member (exit 2). O+ scenarios are parsed here too, so their errors (and the resource
limits of :mod:`spec.oplus.budget`) name the vector file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spec.errors import InputError
from spec.jsonio import expect_int, expect_list, expect_object, expect_str, load_json
from spec.oplus.scenario import parse_scenario

MAX_VECTORS = 100_000
"""Most vectors one index may list."""

_SCALARS = (str, int, float, bool, type(None))


def validate_directory(directory: str | Path) -> None:
    """Raise :class:`InputError` for the first vector (in index order) that
    :func:`conformance.output.vectors.check` could not read (module docstring)."""
    root = Path(directory)
    where = str(root / "index.json")
    index = expect_object(load_json(root / "index.json"), where)
    names = expect_list(index.get("vectors"), f"{where}: vectors")
    if len(names) > MAX_VECTORS:
        raise InputError(f"{len(names):,} vectors listed; at most {MAX_VECTORS:,}", f"{where}: vectors")
    for position, name in enumerate(names):
        expect_str(name, f"{where}: vectors[{position}]")
        path = str(root / name)
        vector = expect_object(load_json(root / name), path)
        suite = vector.get("suite")
        if suite == "oplus":
            _oplus(vector, path)
        elif suite == "fries":
            _fries(vector, path)


def _member(vector: Any, name: str, where: str) -> Any:
    if name not in vector:
        raise InputError(f"missing field {name!r}", where)
    return vector[name]


def _oplus(vector: Any, where: str) -> None:
    parse_scenario(_member(vector, "scenario", where), f"{where}: scenario")
    rows = expect_list(_member(vector, "expected", where), f"{where}: expected")
    for index, raw in enumerate(rows):
        at = f"{where}: expected[{index}]"
        row = expect_object(raw, at)
        expect_int(_member(row, "ts", at), f"{at}.ts")
        expect_str(_member(row, "key", at), f"{at}.key", empty=True)
        _member(row, "value", at)


def _fries(vector: Any, where: str) -> None:
    expect_object(_member(vector, "scenario", where), f"{where}: scenario")
    run = expect_object(_member(vector, "reference_run", where), f"{where}: reference_run")
    if "outputs" in run:
        for index, raw in enumerate(expect_list(run["outputs"], f"{where}: reference_run.outputs")):
            at = f"{where}: reference_run.outputs[{index}]"
            for item in expect_list(raw, at):
                if not isinstance(item, _SCALARS):
                    raise InputError("expected a list of strings and numbers", at)
