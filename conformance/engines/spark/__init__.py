"""Apache Spark through PySpark: one engine per pinned Spark line (``lines.py``).

* ``lines``: the pinned lines; ``session``: the process's SparkSession (jars, settings, log);
  ``sql``: spellings the drivers share; ``errors``: Spark's exceptions as the kit's error kinds;
  ``s3``: object stores in a session; ``adapter``: the engine in this process; ``remote``: a line
  in a Python of its own.
* Each format's part is its Spark driver (``conformance/formats/<format>/drivers/spark.py``).

``engine(line)`` is the engine of a line, always in a worker process of its own (through the worker
isolation): this interpreter when its pyspark is the line's, else the line's own interpreter. A
worker keeps the JVM's client out of the harness's process (no contention for its interpreter
with the reference writer) and a JVM crash from ending the run; the adapter itself
(``adapter.SparkEngine``) also works in-process, as the Spark suites use it.
"""

from __future__ import annotations

from conformance.engines.base import Engine
from conformance.engines.spark import lines


def engine(line: str | None = None) -> Engine:
    """The engine of Spark line ``line`` (default: the newest)."""
    from conformance.engines.spark import remote
    from conformance.isolation import RemoteEngine

    import sys

    wanted = lines.line(line or lines.DEFAULT_LINE)
    installed = lines.installed_pyspark()
    n, c = workers(wanted), calls(wanted)
    spec = ("class", "conformance.engines.spark.adapter:SparkEngine", {"line": wanted.name, "calls": c})
    if installed is not None and lines.line_for_pyspark(installed) is wanted:
        return RemoteEngine(wanted.engine, spec, python=sys.executable, workers=n, calls=c)
    python = remote.interpreter(wanted)
    why = None if python else f"no Python with pyspark {wanted.pyspark} set up: run {remote.setup_hint(wanted)}"
    return RemoteEngine(wanted.engine, spec, python=python, unavailable=why, workers=n, calls=c)


def workers(line: lines.SparkLine) -> int:
    """How many JVMs the line's engine runs side by side (LAKECONF_SPARK_WORKERS_<line>, else
    LAKECONF_SPARK_WORKERS, else the line's default, one). Spark's small jobs keep a JVM's cores busy,
    so more workers pay only where there are cores to spare; each holds its own heap
    (``spark.driver.memory``)."""
    return _count(line, "WORKERS", "Spark workers", line.workers)


def calls(line: lines.SparkLine) -> int:
    """How many reads each of the line's JVMs runs at once (LAKECONF_SPARK_CALLS_<line>, else
    LAKECONF_SPARK_CALLS, else the line's default); writes still run alone (``adapter.SparkEngine``)."""
    return _count(line, "CALLS", "Spark calls at once", line.calls)


def _count(line: lines.SparkLine, what: str, label: str, default: int) -> int:
    import os

    for key in (f"LAKECONF_SPARK_{what}_" + line.name.replace(".", "_"), f"LAKECONF_SPARK_{what}"):
        raw = os.environ.get(key, "").strip()
        if raw:
            try:
                return max(1, int(raw))
            except ValueError:
                raise ValueError(f"{key}={raw!r}: expected a whole number of {label} (1, 2, ...)") from None
    return default


def SparkEngine() -> Engine:  # noqa: N802 - the registry's name for the newest line's engine
    """The newest line's engine (``spark``)."""
    return engine(lines.DEFAULT_LINE)


def Spark35Engine() -> Engine:  # noqa: N802
    """The Spark 3.5 line's engine (``spark-3.5``)."""
    return engine("3.5")
