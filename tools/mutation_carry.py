"""Carrying a campaign's survivors to a newer snapshot (tools/mutation.py ``carry``).

A campaign's mutants are those of its snapshot's ``spark_impl``. When the suite grows checks for
its survivors, ``refresh`` puts the new suite into the old snapshot - unsound as soon as the new
suite needs the newer executor (a bug fixed in ``spark_impl`` while the survivors were triaged:
the new check then fails on the unmutated old code and "kills" every mutant). ``carry`` instead
judges each survivor on a fresh snapshot of the final code, as the same change there: the
mutant of the same module and cosmic-ray operator whose mutated line reads the same. A survivor
whose line changed (or vanished) has no counterpart and stays a survivor: it is reported, never
guessed.
"""

from __future__ import annotations

import difflib
from typing import Any, Callable


def diff_line(original: str, mutated: str) -> str:
    """The first changed line, before -> after."""
    minus = plus = ""
    for line in difflib.unified_diff(original.splitlines(), mutated.splitlines(), lineterm="", n=0):
        if line.startswith("-") and not line.startswith("---") and not minus:
            minus = line[1:].strip()
        elif line.startswith("+") and not line.startswith("+++") and not plus:
            plus = line[1:].strip()
    return f"{minus}  ->  {plus}"


def mutated_line(source: str, operator: str, occurrence: int) -> str | None:
    """The change a cosmic-ray mutant makes to ``source`` (:func:`diff_line`), computed in
    memory; None if the operator has no such occurrence."""
    import cosmic_ray.plugins  # type: ignore[import-untyped]  # noqa: PLC0415 - cosmic_ray: an optional dependency, imported where it is used
    from cosmic_ray.mutating import mutate_code  # type: ignore[import-untyped]  # noqa: PLC0415 - cosmic_ray: an optional dependency, imported where it is used

    mutated = mutate_code(source, cosmic_ray.plugins.get_operator(operator)(), occurrence)
    return None if mutated is None else diff_line(source, mutated)


def counterpart(mutant: dict[str, Any], old: str, new: str | None, catalogue: list[dict[str, Any]],
                change_of: Callable[[str, str, int], str | None] = mutated_line) -> dict[str, Any] | None:
    """The mutant of ``catalogue`` (the new snapshot's) that makes the same change as
    ``mutant`` of the old snapshot; ``old`` and ``new`` are its module's source in each (``new``
    None: the module is gone). Same id if the module is unchanged, else the same module and
    operator whose changed line (``change_of``) reads the same, the nearest to the old line if
    several."""
    if new is None:
        return None
    if new == old:
        return next((m for m in catalogue if m["id"] == mutant["id"]), None)
    change = change_of(old, mutant["operator"], mutant["occurrence"])
    if change is None:
        return None
    same = [m for m in catalogue if m["module"] == mutant["module"] and m["operator"] == mutant["operator"]
            and change_of(new, m["operator"], m["occurrence"]) == change]
    return min(same, key=lambda m: abs(int(m["line"]) - int(mutant["line"])), default=None)
