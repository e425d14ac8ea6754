"""The local SparkSession streamproof creates listens on the loopback interface only (the
project's rule: anything a test or command starts binds to 127.0.0.1)."""

from __future__ import annotations

import os
from typing import Any

import pytest


@pytest.mark.spark
def test_local_session_binds_to_loopback(spark: Any) -> None:
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.driver.bindAddress") == "127.0.0.1"
    assert conf.get("spark.driver.host") == "127.0.0.1"
    assert os.environ.get("SPARK_LOCAL_IP") == "127.0.0.1"
