"""Spark in this process: one engine per pinned line, each format through its Spark driver.

The adapter owns what every format shares (the session, object stores, Spark's log); each
format's driver (``conformance/formats/<format>/drivers/spark.py``) pins its runtime per line
(``RUNTIMES``, ``SESSION_CONF``), declares its gaps for the line it runs on, and maps the
harness steps to what a Spark user types. Spark starts a JVM, so the harness keeps this engine in
its own process (``in_process``) instead of an isolated worker; Java errors surface as exceptions.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import threading
from typing import Sequence

from conformance.engines.base import MultiFormatEngine
from conformance.engines.spark import lines, s3, session
from conformance.model import TableRef


def runtime_label(coordinate: str) -> str:
    """``org.x:x-spark-runtime-4.0_2.13:1.2.0`` -> ``x-spark-runtime 1.2.0`` (Scala and Spark suffixes dropped)."""
    _group, artifact, version = coordinate.split(":")
    artifact = re.sub(r"(_\d+(\.\d+)*)+$", "", artifact)
    artifact = re.sub(r"-\d+\.\d+$", "", artifact)
    return f"{artifact} {version}"


class SparkEngine(MultiFormatEngine):
    """PySpark with the Spark runtimes of every format that pins one for the line."""

    family = "spark"
    # One JVM per run: the harness keeps this engine in its own process instead of spawning an
    # isolated worker (which would start a second JVM).
    in_process = True

    def __init__(self, line: str | None = None, *, formats: Sequence[str] | None = None, calls: int = 1) -> None:
        super().__init__()
        installed = lines.installed_pyspark()
        default = lines.line_for_pyspark(installed) if installed and not line else None
        self.line = lines.line(line) if line else (default or lines.line())
        self.name = self.line.engine
        self._formats = tuple(formats) if formats else None
        # Reads take turns with nothing but writes: a session runs several queries at once, but a
        # write may change the session's settings for its statements (a driver SETs schema-on-read
        # options, another a checkpoint's part size), which a read beside it must not see.
        self.concurrency = max(1, calls)
        self._turns = _ReadWriteTurns()

    def read(self, table: TableRef, **kw):
        with self._turns.shared():
            return super().read(table, **kw)

    def describe(self, table: TableRef, **kw):
        with self._turns.shared():
            return super().describe(table, **kw)

    def reproduction(self, table: TableRef, at=None):
        with self._turns.shared():
            return super().reproduction(table, at)

    def write(self, table: TableRef, steps) -> None:
        with self._turns.alone():
            super().write(table, steps)

    # -- identity ------------------------------------------------------------------------------

    def version(self) -> str:
        installed = lines.installed_pyspark()
        if installed is None:
            return "not installed"
        labels = [runtime_label(d.RUNTIMES[self.line.name]) for f, d in session.drivers().items()
                  if self.line.name in getattr(d, "RUNTIMES", {}) and f in self.formats()]
        return " / ".join([f"spark {installed}", *labels])

    def formats(self) -> tuple[str, ...]:
        """The formats this engine's session carries runtimes for."""
        return self._formats or session.env_formats(self.line)

    def available(self) -> str | None:
        installed = lines.installed_pyspark()
        if installed is None:
            from conformance.project import install_hint

            extra = "spark" if self.line.name == lines.DEFAULT_LINE else "spark" + self.line.name.replace(".", "")
            return f"pyspark is not installed ({install_hint(extra)} for Spark {self.line.name})"
        if lines.line_for_pyspark(installed) is not self.line:
            return f"this Python has pyspark {installed}, not the {self.line.pyspark} of Spark {self.line.name}"
        if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
            return "no Java runtime (java on PATH or JAVA_HOME); Spark needs Java 17"
        return super().available()

    def drivers(self):
        found = super().drivers()
        # A format without a runtime for this line is not offered (its driver exists for another line).
        offered = {}
        for f, d in found.items():
            if self.line.name not in getattr(d, "RUNTIMES", {}):
                self._driver_problems[f] = f"no {f} Spark runtime for Spark {self.line.name} is pinned (none resolves)"
            elif f not in self.formats():
                self._driver_problems[f] = f"the Spark session is configured without {f} (LAKECONF_SPARK_FORMATS)"
            else:
                offered[f] = d
        return offered

    # -- what the drivers use ------------------------------------------------------------------

    def start(self) -> None:
        """Start (or reuse) the SparkSession now, so its start-up is timed apart from the cases."""
        with self._turns.alone():
            session.get(line=self.line.name, formats=self.formats())

    def session(self, table: TableRef):
        """The session, with the table's object store configured."""
        from reference_impl.errors import Unsupported

        spark = session.get(line=self.line.name, formats=self.formats())
        session.make_active(spark)
        if table.format not in session.started_formats():
            raise Unsupported(
                f"the Spark session was started without the {table.format} runtime "
                f"(LAKECONF_SPARK_FORMATS={','.join(session.started_formats())}); set it before the first Spark use",
                feature=table.format,
            )
        s3.configure(spark, table)
        return spark

    # -- Spark's log ---------------------------------------------------------------------------

    @property
    def log_path(self) -> str | None:
        """Spark's log file of this process (WARN and above), once the session started."""
        return session.log_path()

    def log_mark(self) -> int:
        """The current size of Spark's log (the harness keeps what a failed cell adds after it)."""
        path = self.log_path
        return os.path.getsize(path) if path and os.path.exists(path) else 0

    def log_since(self, mark: int) -> str:
        """What Spark logged after ``mark`` (WARN and above), without the Java stack frames; the
        session has one log, so with two reads at once it holds what the other one logged meanwhile."""
        path = self.log_path
        if not path or not os.path.exists(path):
            return ""
        with open(path, "rb") as fh:
            fh.seek(mark)
            text = fh.read(1 << 20).decode("utf-8", "replace")
        return "\n".join(ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("at "))

    def close(self) -> None:
        """Keep the shared session (other adapters in the process may use it); see session.stop()."""


class _ReadWriteTurns:
    """Any number of readers at once, or one writer alone; a waiting writer goes before readers
    that come after it (so a stream of reads cannot hold a build back for ever)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextlib.contextmanager
    def shared(self):
        with self._cond:
            while self._writing or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def alone(self):
        with self._cond:
            self._writers_waiting += 1
            while self._writing or self._readers:
                self._cond.wait()
            self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()
