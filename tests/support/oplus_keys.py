"""O+ keys chosen by the instance ``crc32(key) % parallelism`` gives them
(``spec.oplus.scenario.instance_of``), for tests that need a key of a given instance."""

from __future__ import annotations

import itertools

from spec.oplus.scenario import instance_of


def key_of_instance(low: int, high: int, size: int) -> tuple[str, int]:
    """The first key ``k<n>`` with ``low <= instance_of(key, size) < high``, and its instance."""
    for n in itertools.count():
        index = instance_of(f"k{n}", size)
        if low <= index < high:
            return f"k{n}", index
    raise AssertionError("unreachable")
