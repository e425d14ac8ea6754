"""A real S3 API on 127.0.0.1 for tests: moto's server mode in a subprocess on a free port,
always stopped by the context manager that started it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Iterator


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def s3_server() -> Iterator[str]:
    """Yield ``host:port`` of a fresh moto S3 server (access key / secret: test / test)."""
    port = _free_port()
    binary = os.path.join(os.path.dirname(sys.executable), "moto_server")
    proc = subprocess.Popen([binary, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto_server did not start") from None
                time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def s3_uri(endpoint: str, bucket: str, path: str) -> str:
    """A pyarrow.fs URI for ``bucket/path`` on the server (credentials in the URI, so Spark's
    Python workers need no environment)."""
    return (f"s3://test:test@{bucket}/{path}?region=us-east-1&endpoint_override={endpoint}"
            "&scheme=http&allow_bucket_creation=true")
