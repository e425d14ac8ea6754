"""Checkpoint storage on a local disk or on any filesystem ``pyarrow.fs`` opens (S3, GCS, HDFS,
ABFS, ``file://``), with no rename.

A *location* is a local path or a URI as ``pyarrow.fs.FileSystem.from_uri`` reads it, with
the credentials and endpoint in it, so a Spark Python worker opens the same store from the
string alone, e.g. ``s3://key:secret@bucket/ckpt?region=us-east-1&endpoint_override=host:port&scheme=http``.
:func:`join` appends names to a location (for a URI they go before the query).

:class:`Store` is a location seen as a directory of named objects:

* :meth:`Store.write_once` - the whole object becomes visible at once or not at all. A local
  path keeps the executor's behaviour of old: a temporary file in the same directory, then
  ``os.replace``. On an object store it is one PUT (S3, GCS and ABFS make an object visible
  only when its upload completes). Callers write each name once; the exceptions (a retried
  task, a request made again after a restart) rewrite the whole object with the same role.
  On HDFS and ``file://`` (pyarrow's local filesystem) a reader can see a partly written
  object: every record the executor reads back is framed with its length and digest
  (:mod:`spark_impl.records`), so such an object is refused, never used.
* :meth:`Store.read` (None when absent), :meth:`Store.exists`, :meth:`Store.list` (the names
  directly under a prefix), :meth:`Store.delete` (an object, or everything under a prefix),
  :meth:`Store.load` (decode with a bounded per-process cache, module docstring of
  :func:`Store.load`).

Filesystems are opened once per process and ``(scheme, netloc, query)``. Messages name a
location without its credentials and query (:func:`display`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from typing import Any, Callable, TypeVar
from urllib.parse import urlsplit

from spark_impl.lru import LRU

T = TypeVar("T")

_FLAT = frozenset({"s3", "gcs", "abfs"})  # object stores: no directories to create
_FILESYSTEMS: dict[tuple[str, str, str], tuple[Any, str]] = {}


def is_uri(location: str) -> bool:
    """A filesystem URI (``scheme://...``), not a local path."""
    return "://" in location


def join(location: str, *names: str) -> str:
    """``location`` / ``names`` (for a URI the names go into its path, before the query)."""
    if not is_uri(location):
        return os.path.join(location, *names)
    base, sep, query = location.partition("?")
    return "/".join([base.rstrip("/"), *names]) + sep + query


def display(location: str) -> str:
    """``location`` without credentials or query (for messages)."""
    if not is_uri(location):
        return location
    parts = urlsplit(location)
    return f"{parts.scheme}://{parts.hostname or ''}{parts.path}"


def resolve(location: str) -> tuple[Any, str]:
    """``(pyarrow filesystem, path inside it)`` of a URI; the filesystem is cached per process."""
    parts = urlsplit(location)
    key = (parts.scheme, parts.netloc, parts.query)
    found = _FILESYSTEMS.get(key)
    if found is None:
        import pyarrow.fs as pafs

        fs, base = pafs.FileSystem.from_uri(f"{parts.scheme}://{parts.netloc}/?{parts.query}")
        found = _FILESYSTEMS[key] = (fs, str(base).rstrip("/"))
    fs, base = found
    return fs, base + parts.path.rstrip("/")


class Store:
    """A location seen as a directory of named objects (module docstring)."""

    def __init__(self, location: str) -> None:
        self.local = not is_uri(location)
        self.location = os.path.abspath(location) if self.local else location
        self.poll_s = 0.001 if self.local else 0.02
        """How often a task polls for a control message between two tuples (a stat locally,
        a HEAD request on an object store)."""

    def __repr__(self) -> str:
        return f"Store({display(self.location)!r})"

    def path(self, name: str = "") -> str:
        """The location of ``name`` (the store itself for ``""``)."""
        return join(self.location, name) if name else self.location

    def make_root(self) -> None:
        """Create the store's directory (a bucket too, if the URI allows it)."""
        if self.local:
            os.makedirs(self.location, exist_ok=True)
        else:
            fs, path = resolve(self.location)
            fs.create_dir(path, recursive=True)

    def write_once(self, name: str, data: bytes) -> None:
        """Write the whole object ``name`` (module docstring)."""
        path = self.path(name)
        if self.local:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
            return
        fs, inner = resolve(path)
        if fs.type_name not in _FLAT:  # HDFS, file://: a file needs its directory
            fs.create_dir(inner.rsplit("/", 1)[0], recursive=True)
        with fs.open_output_stream(inner) as handle:
            handle.write(data)

    def read(self, name: str) -> bytes | None:
        """The object's bytes, or None if there is no such object."""
        path = self.path(name)
        if self.local:
            try:
                with open(path, "rb") as handle:
                    return handle.read()
            except FileNotFoundError:
                return None
        fs, inner = resolve(path)
        try:
            with fs.open_input_stream(inner) as handle:
                data: bytes = handle.read()
                return data
        except FileNotFoundError:
            return None

    def exists(self, name: str) -> bool:
        """Is there an object ``name``?"""
        if self.local:
            return os.path.exists(self.path(name))
        import pyarrow.fs as pafs

        fs, inner = resolve(self.path(name))
        return bool(fs.get_file_info(inner).type != pafs.FileType.NotFound)

    def stamp(self, name: str) -> tuple[int, ...] | None:
        """Changes whenever the object is rewritten (local: inode, mtime, size); None when
        absent. Only local stores give one: an object store's times are too coarse."""
        if not self.local:
            return None
        try:
            info = os.stat(self.path(name))
        except FileNotFoundError:
            return None
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def list(self, prefix: str = "") -> list[str]:
        """Sorted names directly under ``prefix`` (objects and sub-prefixes); [] if none."""
        path = self.path(prefix)
        if self.local:
            return sorted(os.listdir(path)) if os.path.isdir(path) else []
        import pyarrow.fs as pafs

        fs, inner = resolve(path)
        infos = fs.get_file_info(pafs.FileSelector(inner, allow_not_found=True))
        return sorted(str(i.path).rstrip("/").rsplit("/", 1)[-1] for i in infos)

    def delete(self, name: str) -> None:
        """Delete object ``name`` or everything under prefix ``name`` (nothing if absent)."""
        path = self.path(name)
        if self.local:
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
            return
        import pyarrow.fs as pafs

        fs, inner = resolve(path)
        kind = fs.get_file_info(inner).type
        if kind == pafs.FileType.Directory:
            fs.delete_dir(inner)
        elif kind == pafs.FileType.File:
            fs.delete_file(inner)

    def load(self, name: str, decode: Callable[[bytes], T], cache: LRU[tuple[Any, ...], T]) -> T | None:
        """``decode(bytes of name)``, cached in ``cache``; None if absent. Locally the cache key
        is the file's stamp (one ``stat`` per call, as the executor always did); on an object
        store every call reads the object and the key is its digest, so an object rewritten
        within the store's time resolution is never served stale."""
        path = self.path(name)
        stamp = self.stamp(name) if self.local else None
        if self.local:
            if stamp is None:
                return None
            key: tuple[Any, ...] = (path, *stamp)
            found = cache.get(key)
            if found is not None:
                return found
        data = self.read(name)
        if data is None:
            return None
        if not self.local:
            key = (path, hashlib.blake2b(data, digest_size=16).digest())
            found = cache.get(key)
            if found is not None:
                return found
        value = decode(data)
        cache.put(key, value)
        return value


_STORES: LRU[str, Store] = LRU(32)


def open_store(location: str) -> Store:
    """The :class:`Store` of ``location`` (cached per process)."""
    found = _STORES.get(location)
    if found is None:
        found = Store(location)
        _STORES.put(location, found)
    return found


def read_bytes(location: str) -> bytes | None:
    """The bytes of the object at ``location`` (None if absent)."""
    return Store(location).read("")


def write_bytes(location: str, data: bytes) -> None:
    """Write the whole object at ``location`` (:meth:`Store.write_once`)."""
    Store(location).write_once("", data)
