"""Apache Spark through PySpark: one engine per pinned Spark line (``lines.py``).

* ``lines``: the pinned lines; ``session``: the process's SparkSession (jars, settings, log);
  ``sql``: spellings the drivers share; ``errors``: Spark's exceptions as the kit's error kinds;
  ``s3``: object stores in a session; ``adapter``: the engine in this process; ``remote``: a line
  in a Python of its own.
* Each format's part is its Spark driver (``conformance/formats/<format>/drivers/spark.py``).

``engine(line)`` is the engine of a line: in this process when its pyspark is the one installed,
else in the line's own interpreter through the worker isolation.
"""

from __future__ import annotations

from conformance.engines.base import Engine
from conformance.engines.spark import lines


def engine(line: str | None = None) -> Engine:
    """The engine of Spark line ``line`` (default: the newest)."""
    from conformance.engines.spark import remote
    from conformance.engines.spark.adapter import SparkEngine
    from conformance.isolation import RemoteEngine

    wanted = lines.line(line or lines.DEFAULT_LINE)
    installed = lines.installed_pyspark()
    if installed is not None and lines.line_for_pyspark(installed) is wanted:
        return SparkEngine(wanted.name)
    python = remote.interpreter(wanted)
    why = None if python else f"no Python with pyspark {wanted.pyspark} set up: run {remote.setup_hint(wanted)}"
    spec = ("class", "conformance.engines.spark.adapter:SparkEngine", {"line": wanted.name})
    return RemoteEngine(wanted.engine, spec, python=python, unavailable=why)


def SparkEngine() -> Engine:  # noqa: N802 - the registry's name for the newest line's engine
    """The newest line's engine (``spark``)."""
    return engine(lines.DEFAULT_LINE)


def Spark35Engine() -> Engine:  # noqa: N802
    """The Spark 3.5 line's engine (``spark-3.5``)."""
    return engine("3.5")
