"""``spark_impl.store`` opens filesystems "once per process and ``(scheme, netloc, query)``"
(module docstring): the netloc carries the bucket and the credentials, the query the region
and the endpoint, so two URIs that differ in either are two filesystems, and the same URI (or
a path under it) is served from the cache. Checked with ``pyarrow.fs.FileSystem``
replaced by a recorder (no object store needed); each test uses buckets of its own, so the
process's cache holds none of them before.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlsplit

import pyarrow.fs as pafs
import pytest

from spark_impl.store import resolve


class _Opened:
    """A filesystem the recorder made, named by the URI it was opened for."""

    def __init__(self, uri: str) -> None:
        self.uri = uri


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URIs ``pyarrow.fs.FileSystem.from_uri`` is asked for while the test runs."""
    calls: list[str] = []

    class Recorder:
        """``pyarrow.fs.FileSystem`` as ``spark_impl.store`` uses it: ``from_uri`` only."""

        @staticmethod
        def from_uri(uri: str) -> tuple[Any, str]:
            calls.append(uri)
            return _Opened(uri), urlsplit(uri).netloc.rsplit("@", 1)[-1]

    monkeypatch.setattr(pafs, "FileSystem", Recorder)
    return calls


def test_uris_of_another_bucket_or_another_query_open_their_own_filesystem(opened: list[str]) -> None:
    one, two = f"b{uuid.uuid4().hex}", f"b{uuid.uuid4().hex}"
    base = f"s3://key:secret@{one}/ckpt/oplus?region=r1"
    first, other_bucket, other_query = (resolve(base), resolve(base.replace(f"@{one}/", f"@{two}/")),
                                        resolve(base.replace("r1", "r2")))
    assert first[1] == f"{one}/ckpt/oplus" and other_bucket[1] == f"{two}/ckpt/oplus"
    assert other_query[1] == f"{one}/ckpt/oplus"
    assert len({id(first[0]), id(other_bucket[0]), id(other_query[0])}) == 3 and len(opened) == 3


def test_the_same_uri_and_a_path_under_it_are_served_from_the_cache(opened: list[str]) -> None:
    bucket = f"b{uuid.uuid4().hex}"
    base = f"s3://key:secret@{bucket}/ckpt/oplus?region=r1"
    first = resolve(base)
    again, inner = resolve(base), resolve(base.replace("oplus?", "oplus/state?"))
    assert again == first and inner == (first[0], f"{bucket}/ckpt/oplus/state")
    assert len(opened) == 1
