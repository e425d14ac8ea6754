"""The status record every live front end reports (:class:`Status`), and the helpers its
readers share; what each field means is in :mod:`spark_impl.status` and
docs/production/operating.md, "Status". Each front end reads its own checkpoint
(:mod:`spark_impl.reconfig.status`, :mod:`spark_impl.oplus.status`,
:mod:`spark_impl.dgs.status`); this module imports none of them."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from spark_impl.store import is_uri, open_store, resolve

FRONT_ENDS = ("fries", "oplus", "dgs")
REQUEST_STATES = ("pending", "applied", "rejected", "lost")


@dataclass(frozen=True)
class RequestStatus:
    """One request: ``request`` names it (Fries ``R<j>``, O+ ``R<id>``, DGS ``job <j>``; a
    refusal without a number ``refusal <n>``), ``state`` is one of :data:`REQUEST_STATES`,
    ``detail`` says more (the reason of a rejection, what a pending one waits for)."""

    request: str
    state: str
    detail: str = ""


@dataclass(frozen=True)
class Status:
    """A query's committed state (module docstring)."""

    front_end: str
    committed_batch: int
    versions: dict[str, str]
    requests: tuple[RequestStatus, ...] = ()
    late: int = 0
    state_bytes: int | None = None
    stream_batch: int | None = None
    notes: tuple[str, ...] = field(default=())
    backlog: int | None = None

    def count(self, state: str) -> int:
        """How many requests are in ``state``."""
        return sum(1 for r in self.requests if r.state == state)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (for a status endpoint or a log line)."""
        raw = asdict(self)
        raw["requests"] = [asdict(r) for r in self.requests]
        raw["notes"] = list(self.notes)
        return raw


def tree_bytes(location: str) -> int:
    """Bytes of every file under ``location`` (a local path or a :mod:`spark_impl.store` URI;
    0 when absent)."""
    if not is_uri(location):
        total = 0
        for folder, _, files in os.walk(location):
            for name in files:
                try:
                    total += os.stat(os.path.join(folder, name)).st_size
                except FileNotFoundError:  # deleted by retention meanwhile
                    pass
        return total
    import pyarrow.fs as pafs

    fs, inner = resolve(location)
    infos = fs.get_file_info(pafs.FileSelector(inner, recursive=True, allow_not_found=True))
    return sum(int(i.size or 0) for i in infos if i.type == pafs.FileType.File)


def checkpoint_root(checkpoint_dir: str) -> str:
    """``checkpoint_dir`` as an absolute path (a URI as it is)."""
    return checkpoint_dir if is_uri(checkpoint_dir) else os.path.abspath(checkpoint_dir)


def stream_batch(query_checkpoint: str | None) -> int | None:
    """The last batch Structured Streaming committed (``commits/<id>`` of a local checkpoint)."""
    if query_checkpoint is None or is_uri(query_checkpoint):
        return None
    folder = os.path.join(query_checkpoint, "commits")
    if not os.path.isdir(folder):
        return None
    return max((int(n) for n in os.listdir(folder) if n.isdigit()), default=-1)


def location_exists(location: str) -> bool:
    """True when ``location`` (a local folder or a store URI) holds something."""
    if not is_uri(location):
        return os.path.isdir(location)
    store = open_store(location)
    return bool(store.list(""))


def late_total(value: Any) -> int:
    """A late count given as an int or as a per-job mapping."""
    if isinstance(value, Mapping):
        return sum(int(v) for v in value.values())
    return int(value or 0)
