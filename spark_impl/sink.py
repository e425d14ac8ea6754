"""The file sink shared by spark_impl's round-based executors (O+, DGS).

A task writes the outputs of one (batch, step, partition) to one file, replaced atomically,
so a re-executed task rewrites the same file: the sink is idempotent by batch id (Spark's
guide: exactly-once end to end needs a replayable source and an idempotent sink). The driver reads the directory once, at
the end of a run. On a cluster the directory must be on storage every executor and the
driver can reach. ``sink`` may also be a URI :mod:`spark_impl.store` opens (S3, GCS, HDFS,
``file://``): a part is then one write-once object (an object store has no rename; a PUT makes
the whole object visible at once), framed and checksummed (``spark_impl.records``: HDFS and
``file://`` show an object while it is written), listed and read through the store.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from typing import Any, Iterator

from spark_impl.records import read_pickle_record, write_pickle_record
from spark_impl.store import display, is_uri, open_store


def write_part(sink: str, name: str, outputs: list[Any]) -> None:
    """Write ``outputs`` to ``sink/name.pkl`` atomically (nothing when empty)."""
    if not outputs:
        return
    if is_uri(sink):
        write_pickle_record(open_store(sink), f"{name}.pkl", outputs)
        return
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=sink)
    with os.fdopen(fd, "wb") as handle:
        pickle.dump(outputs, handle)
    os.replace(tmp, os.path.join(sink, f"{name}.pkl"))


def read_part(sink: str, entry: str) -> list[Any] | None:
    """The outputs of part file ``entry`` (``<name>.pkl``) of ``sink``, or None if absent."""
    if is_uri(sink):
        found: list[Any] | None = read_pickle_record(open_store(sink), entry)
        return found
    try:
        with open(os.path.join(sink, entry), "rb") as handle:
            outputs: list[Any] = pickle.load(handle)
            return outputs
    except FileNotFoundError:
        return None


def read_parts(sink: str) -> Iterator[tuple[str, list[Any]]]:
    """Every part as ``(name, outputs)``, in name order."""
    entries = open_store(sink).list() if is_uri(sink) else sorted(os.listdir(sink))
    for entry in entries:
        if entry.endswith(".pkl"):
            found = read_part(sink, entry)
            if found is None:  # listed, then gone: nothing deletes a part while it is read
                raise FileNotFoundError(f"part {entry} of {display(sink)} vanished while it was read")
            yield entry[:-4], found
