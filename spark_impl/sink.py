"""The file sink shared by spark_impl's round-based executors (O+, DGS).

A task writes the outputs of one (batch, step, partition) to one file, replaced atomically,
so a re-executed task rewrites the same file: the sink is idempotent by batch id (SPARK-NOTES,
"Exactly-once end to end ... an idempotent sink"). The driver reads the directory once, at
the end of a run. On a cluster the directory must be on storage every executor and the
driver can reach. ``sink`` may also be a URI :mod:`spark_impl.store` opens (S3, GCS, HDFS,
``file://``): a part is then one write-once object (an object store has no rename; a PUT makes
the whole object visible at once), listed and read through the store.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from typing import Any, Iterator

from spark_impl.store import is_uri, open_store


def write_part(sink: str, name: str, outputs: list[Any]) -> None:
    """Write ``outputs`` to ``sink/name.pkl`` atomically (nothing when empty)."""
    if not outputs:
        return
    if is_uri(sink):
        open_store(sink).write_once(f"{name}.pkl", pickle.dumps(outputs))
        return
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=sink)
    with os.fdopen(fd, "wb") as handle:
        pickle.dump(outputs, handle)
    os.replace(tmp, os.path.join(sink, f"{name}.pkl"))


def read_parts(sink: str) -> Iterator[tuple[str, list[Any]]]:
    """Every part as ``(name, outputs)``, in name order."""
    if is_uri(sink):
        store = open_store(sink)
        for entry in store.list():
            data = store.read(entry) if entry.endswith(".pkl") else None
            if data is not None:
                yield entry[:-4], pickle.loads(data)
        return
    for entry in sorted(os.listdir(sink)):
        if entry.endswith(".pkl"):
            with open(os.path.join(sink, entry), "rb") as handle:
                yield entry[:-4], pickle.load(handle)
