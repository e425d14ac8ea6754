"""The executor's replayable sources against their contract, without Spark.

``spark_impl.reconfig.model.Source``: tuple ``i`` (ingestion order) is always the same, so a
restart re-reads exactly what its checkpoint's offset says. Two sources build that promise from
files that keep arriving, each with a per-process cache of what it read:

* :class:`~spark_impl.reconfig.model.DirectorySource` - JSON-lines files read in **name order**,
  lists read back as tuples;
* :class:`~spark_impl.reconfig.streaming.BatchLogSource` - the Structured Streaming front end's
  input log (``index.json`` + one file per batch and partition), its cached layout refreshed
  when a tuple lies past it, files below the committed offset deleted
  (:meth:`~spark_impl.reconfig.streaming.InputIndex.drop_below`).

The suite's ``directory`` and ``streaming`` paths run only two cases each, so whether a broken
promise shows there is luck: the directory listing in ``os.listdir`` order is
caught at seed 0 by one case and missed at seed 1. Here both sources are read the way the
executor reads them - tuples fetched while files arrive, the cache filled in between - and every
tuple is compared with the files' contents in their documented order. A failure names the first
tuple that differs.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any, Callable
from spark_impl.keys import key_from_json
from spark_impl.reconfig.model import DirectorySource
from spark_impl.reconfig.streaming import BatchLogSource, InputIndex

FILES = 12
"""Files per source: with this many, a listing in any order but by name (a hash order, the
creation order of a shuffled directory) differs from the name order."""

ROWS = 3
"""Rows per file."""


def _row(f: int, r: int) -> tuple[list[Any], int]:
    """Row ``r`` of file ``f``: a list key (read back as a tuple) and a value."""
    return ["k", f, [r, None]], 100 * f + r


def _first_difference(read: Callable[[int], Any], expected: list[tuple[Any, ...]], what: str) -> str | None:
    """The first tuple ``read(i)`` that is not ``expected[i]``, in words."""
    for i, want in enumerate(expected):
        try:
            got = read(i)
        except Exception as error:  # noqa: BLE001 - a crash of the source is a finding
            return f"{what}: tuple {i} raised {type(error).__name__}: {error} (expected {want!r})"
        if tuple(got) != want:
            return f"{what}: tuple {i} is {tuple(got)!r}, expected {want!r}"
    return None


def _expected(source: str, rows: list[tuple[list[Any], int]]) -> list[tuple[Any, ...]]:
    return [(source, f"{source}:{i}", key_from_json(k), v) for i, (k, v) in enumerate(rows)]


def _write_lines(path: str, rows: list[tuple[list[Any], int]]) -> None:
    staging = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.tmp")
    with open(staging, "w", encoding="utf-8") as handle:
        handle.write("".join(json.dumps([k, v]) + "\n" for k, v in rows))
    os.replace(staging, path)


def directory_problem(root: str) -> str | None:
    """:class:`DirectorySource` over a directory written at once in shuffled order, then one
    that grows file by file (in name order, as the contract asks) and is read in between."""
    files = {f: [_row(f, r) for r in range(ROWS)] for f in range(FILES)}
    static = os.path.join(root, "static")
    os.makedirs(static)
    order = list(range(FILES))
    random.Random(7).shuffle(order)
    for f in order:  # created out of name order: only the name order is the contract
        _write_lines(os.path.join(static, f"part-{f:03d}.jsonl"), files[f])
    source = DirectorySource("S", static)
    rows = [row for f in range(FILES) for row in files[f]]
    if source.count() != len(rows):
        return f"DirectorySource: count() is {source.count()} for {len(rows)} rows in {FILES} files"
    found = _first_difference(source.get, _expected("S", rows), "DirectorySource (files in name order)")
    if found is not None:
        return found
    growing = os.path.join(root, "growing")
    os.makedirs(growing)
    source = DirectorySource("S", growing)
    landed: list[tuple[list[Any], int]] = []
    for f in range(FILES):
        _write_lines(os.path.join(growing, f"part-{f:03d}.jsonl"), files[f])
        landed += files[f]
        if source.count() != len(landed):
            return f"DirectorySource: count() is {source.count()} after {f + 1} files ({len(landed)} rows)"
        found = _first_difference(source.get, _expected("S", landed),
                                  f"DirectorySource growing (after {f + 1} files)")
        if found is not None:
            return found
    return None


def batch_log_problem(root: str) -> str | None:
    """:class:`BatchLogSource` over an input log that grows batch by batch (read in between,
    so the cached layout is stale at every new batch), then loses its files below an offset
(the tuples above it keep their positions, also for a reader without a cache)."""
    path = os.path.join(root, "input")
    os.makedirs(path)
    source = BatchLogSource("S", path)
    index = InputIndex()
    rows: list[tuple[list[Any], int]] = []
    for batch in range(FILES // 2):
        entries = []
        contents = {part: [_row(2 * batch + part, r) for r in range(ROWS - part)] for part in (0, 1)}
        for part in (1, 0):  # two partitions per batch, written in any order (3 and 2 rows)
            name = f"b{batch:012d}-p{part:05d}.jsonl"
            _write_lines(os.path.join(path, name), contents[part])
            entries.append([name, len(contents[part])])
        index.batches.append([batch, sorted(entries)])  # as foreachBatch indexes them: by name
        index.last = batch
        index.write(path)
        rows += contents[0] + contents[1]
        if source.count() != len(rows):
            return f"BatchLogSource: count() is {source.count()} after batch {batch} ({len(rows)} rows indexed)"
        found = _first_difference(source.get, _expected("S", rows), f"BatchLogSource (after batch {batch})")
        if found is not None:
            return found
    offset = len(rows) // 2
    if index.drop_below(path, offset):
        index.write(path)
    kept = _expected("S", rows)
    base = index.base
    if not 0 < base <= offset:
        return f"BatchLogSource: after drop_below({offset}) the index base is {base} (files wholly below it go)"
    if source.count() != len(rows):  # deleted files' tuples still count: positions never change
        return f"BatchLogSource: count() is {source.count()} after drop_below({offset}), expected {len(rows)}"
    fresh = BatchLogSource("S", path)  # another worker's view: no cached layout or file
    return _first_difference(lambda i: fresh.get(i + base), kept[base:], f"BatchLogSource (files below {base} dropped)")


def test_a_directory_source_reads_its_files_in_name_order_as_they_arrive(tmp_path: Path) -> None:
    assert directory_problem(str(tmp_path)) is None


def test_the_input_log_gives_every_tuple_its_position_while_it_grows_and_after_drops(tmp_path: Path) -> None:
    assert batch_log_problem(str(tmp_path)) is None
