"""The pytest fixtures of the object-store tests: one moto S3 server per test module
(:func:`endpoint`), and a checkpoint location on each kind of store (:func:`location`).

``tests/conftest.py`` registers this module as a plugin (``pytest_plugins``): a test names the
fixture as a parameter, nothing is imported (an imported fixture would be a name the test's
parameter shadows); a module may still define its own ``location``."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from support.s3_server import s3_server, s3_uri


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """``host:port`` of a moto S3 server started for the test module and stopped after it."""
    with s3_server() as where:
        yield where


@pytest.fixture(params=["local", "file-uri", "s3"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh checkpoint location: a local path, a ``file://`` URI (no atomic rename, writes
    in place), and a prefix on the module's S3 server."""
    if request.param == "local":
        return str(tmp_path / "ckpt")
    if request.param == "file-uri":
        return f"file://{tmp_path}/ckpt"
    where = request.getfixturevalue("endpoint")
    return s3_uri(where, "unit", tmp_path.name)  # a fresh prefix per test
