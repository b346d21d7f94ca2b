"""Fixtures of the Spark suite: the Spark engine of this interpreter's line, local and MinIO stores.

Spark tests are marked ``spark`` (deselect with ``-m "not spark"``); they run the line whose pyspark
is installed here (one tox environment per line, LAKECONF_SPARK_LINE naming it). Without pyspark
or Java they are skipped with the reason; with LAKECONF_REQUIRE_SPARK=1 that is a failure instead.
"""

from __future__ import annotations

import os

import pytest

from conformance.storage import Store
from conformance.storage.testing import store_or_skip


def pytest_configure(config):
    config.addinivalue_line("markers", "spark: needs PySpark and a JVM (slow: starts a SparkSession)")


def usable(engine):
    """``engine`` when Spark can run here; else a skip with the reason (a failure under
    LAKECONF_REQUIRE_SPARK=1)."""
    reason = engine.available()
    if reason:
        if os.environ.get("LAKECONF_REQUIRE_SPARK", "") not in ("", "0", "false"):
            pytest.fail(f"LAKECONF_REQUIRE_SPARK is set but Spark cannot run: {reason}")
        pytest.skip(f"Spark not available: {reason}")
    return engine


@pytest.fixture(scope="session")
def spark_engine():
    """The Spark adapter (its SparkSession is shared by the whole test process)."""
    from conformance.engines.spark.adapter import SparkEngine

    engine = usable(SparkEngine(os.environ.get("LAKECONF_SPARK_LINE") or None))
    yield engine
    engine.close()


@pytest.fixture(scope="module", params=["local", "minio"])
def store(request, tmp_path_factory) -> Store:
    """Each Spark test runs on local disk and on MinIO (skipped with the reason without MinIO)."""
    with store_or_skip(request.param, str(tmp_path_factory.mktemp(f"store-{request.param}"))) as store:
        yield store


@pytest.fixture
def lakeconf(store, monkeypatch, tmp_path):
    """The command line as a user runs it on this store's tables (conformance.suites.clirun)."""
    from conformance.suites.clirun import LakeconfCli

    return LakeconfCli(store, monkeypatch, tmp_path)
