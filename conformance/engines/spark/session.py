"""The one SparkSession of a process: its jars, its settings, its log, and what drivers keep in it.

Started lazily on first use and reused by every Spark adapter in the process (a JVM costs seconds
to start; see ``stats()``). Its jars are the Spark runtimes the formats' Spark drivers pin for the
line (``RUNTIMES``) plus hadoop-aws for ``s3a://``, resolved by ``spark.jars.packages`` into the
Ivy cache (``~/.ivy2`` or LAKECONF_IVY_DIR); ``.ci/install-spark`` fills it ahead of time and
records the resolved jar list, so later sessions start offline. Settings:

* LAKECONF_SPARK_MASTER (default ``local[2]``);
* LAKECONF_SPARK_FORMATS (default: every format with a runtime for the line): the runtimes put
  on the classpath; one session serves them all, their SQL extensions side by side;
* LAKECONF_SPARK_S3 (default ``1``: add hadoop-aws + the AWS SDK so ``s3a://`` works);
* LAKECONF_SPARK_CONF: more settings, ``key=value`` separated by ``;`` (they win over the kit's).

Spark's own log goes to a file (WARN and above), never to the results; an error message carries
the Java exception's first lines only.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
import time
from typing import Any, Sequence

from conformance.engines.spark import lines

_LOG4J2 = """\
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{HH:mm:ss.SSS}} %p %c{{1}}: %m%n%ex
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
logger.ivy.name = org.apache.ivy
logger.ivy.level = error
"""


class _Session:
    """Holder of the process's SparkSession, its settings and start-up timings."""

    lock = threading.Lock()
    spark: Any = None
    line: lines.SparkLine | None = None
    formats: tuple[str, ...] = ()
    s3: bool = False
    log_dir: str | None = None
    first_start_s: float | None = None
    starts: int = 0
    # Per-session state the adapter and drivers keep (configured buckets, registered catalogs):
    # cleared with the session, since it describes what the JVM was told.
    state: dict[str, Any] = {}


# ----------------------------------------------------------------------------------------------
# What the formats bring: runtimes and settings from their Spark drivers
# ----------------------------------------------------------------------------------------------


def drivers() -> dict[str, Any]:
    """format -> its Spark driver module (formats whose driver imports)."""
    import importlib

    from conformance import formats

    out = {}
    for name, plugin in formats.all_formats().items():
        spec = plugin.drivers.get("spark")
        if spec:
            try:
                out[name] = importlib.import_module(spec.partition(":")[0])
            except ImportError:
                continue
    return out


def line_formats(line: lines.SparkLine) -> list[str]:
    """The formats with a Spark runtime pinned for ``line``, in extension order."""
    found = [(getattr(d, "EXTENSION_PRIORITY", 50), f) for f, d in drivers().items() if line.name in getattr(d, "RUNTIMES", {})]
    return [f for _, f in sorted(found)]


def env_formats(line: lines.SparkLine) -> tuple[str, ...]:
    """LAKECONF_SPARK_FORMATS, else every format with a runtime for the line."""
    raw = os.environ.get("LAKECONF_SPARK_FORMATS")
    if raw:
        return tuple(f.strip() for f in raw.split(",") if f.strip())
    return tuple(line_formats(line))


def packages(line: lines.SparkLine, formats: Sequence[str], *, s3: bool = False) -> list[str]:
    """The Maven coordinates for ``spark.jars.packages``: the formats' runtimes (+ s3a jars)."""
    found = drivers()
    out = []
    for fmt in formats:
        runtimes = getattr(found.get(fmt), "RUNTIMES", {})
        if line.name not in runtimes:
            raise KeyError(f"Spark line {line.name} pins no runtime for format {fmt!r}")
        out.append(runtimes[line.name])
    if s3:
        out.extend(line.s3_packages())
    return out


def java_options(formats: Sequence[str]) -> list[str]:
    """JVM options the formats' drivers ask for (``JAVA_OPTIONS``: system properties their runtimes read)."""
    found = drivers()
    return [opt for fmt in formats for opt in getattr(found.get(fmt), "JAVA_OPTIONS", ())]


def format_conf(line: lines.SparkLine, formats: Sequence[str]) -> dict[str, str]:
    """Spark settings the formats need (their drivers' ``SESSION_CONF``); SQL extensions of several
    formats are joined with commas in extension order; for any other key the first format wins."""
    found = drivers()
    ordered = sorted(formats, key=lambda f: getattr(found.get(f), "EXTENSION_PRIORITY", 50))
    conf: dict[str, str] = {}
    for fmt in ordered:
        for key, value in getattr(found.get(fmt), "SESSION_CONF", {}).items():
            if key == "spark.sql.extensions" and key in conf and value not in conf[key].split(","):
                conf[key] = conf[key] + "," + value
            else:
                conf.setdefault(key, value)
    return conf


# ----------------------------------------------------------------------------------------------
# Jars resolved once
# ----------------------------------------------------------------------------------------------


def ivy_dir() -> str:
    """The Ivy cache Spark resolves packages into."""
    return os.environ.get("LAKECONF_IVY_DIR") or os.path.join(os.path.expanduser("~"), ".ivy2")


def jar_manifest_path(packages_: Sequence[str]) -> str:
    """Where the resolved jar list of a package set is kept (next to the Ivy cache, keyed by the set)."""
    key = hashlib.sha256(",".join(packages_).encode()).hexdigest()[:16]
    return os.path.join(ivy_dir(), f"lakeconf-{key}.jars")


def read_jar_manifest(packages_: Sequence[str]) -> list[str] | None:
    """The jars resolved earlier for ``packages_``, or ``None`` if unknown or any jar is gone."""
    try:
        with open(jar_manifest_path(packages_)) as fh:
            jars = [line.strip() for line in fh if line.strip()]
    except OSError:
        return None
    paths = [j[len("file://") :] if j.startswith("file://") else j for j in jars]
    if not jars or not all(os.path.isfile(p) for p in paths):
        return None
    return jars


def write_jar_manifest(packages_: Sequence[str], jars: Sequence[str]) -> str:
    """Record the jars Ivy resolved for ``packages_`` so later sessions skip resolution (and the network)."""
    path = jar_manifest_path(packages_)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as fh:
        fh.write("\n".join(jars) + "\n")
    os.replace(path + ".tmp", path)
    return path


# ----------------------------------------------------------------------------------------------
# The session
# ----------------------------------------------------------------------------------------------


# A session's life is thousands of small, different queries: most of the JVM's CPU goes to compiling
# code that then runs a few times (the JIT took 98 s of 167 s in a Spark 3.5 run of one format's
# cases, JFR), and to G1's concurrent threads. Compiling only code that runs three times as often,
# with the throughput collector, cut the JVM's CPU by 15-22% on the Spark 3.5 engine's own cells
# (723 cells on MinIO: 349 s -> 296 s and 332 s -> 260 s in two interleaved pairs) at equal or better
# wall time; in a whole main job the gain was within run-to-run noise. C1 alone
# (TieredStopAtLevel=1) was slower (350 s, wall +18%). LAKECONF_SPARK_JAVA_OPTS, given later, wins.
JIT_GC_OPTIONS = ("-XX:+UseParallelGC", "-XX:CompileThresholdScaling=3")


def settings(
    line: lines.SparkLine,
    formats: Sequence[str],
    *,
    s3: bool,
    log_dir: str,
    master: str | None = None,
    jars: Sequence[str] | None = None,
) -> dict[str, str]:
    """Every Spark setting the kit's session uses (pure: tested without a JVM).

    ``jars``: already-resolved jar files (from the manifest .ci/install-spark writes); then no Ivy
    resolution runs at start-up, so a session starts offline.
    """
    log_conf = os.path.join(log_dir, "log4j2.properties")
    conf = {
        "spark.master": master or os.environ.get("LAKECONF_SPARK_MASTER", "local[2]"),
        "spark.app.name": "lakeconf",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "1",
        "spark.default.parallelism": "2",
        "spark.jars.ivy": ivy_dir(),
        "spark.driver.extraJavaOptions": " ".join(
            [f"-Dlog4j2.configurationFile=file:{log_conf}", "-Duser.timezone=UTC", *JIT_GC_OPTIONS,
             *java_options(formats), *os.environ.get("LAKECONF_SPARK_JAVA_OPTS", "").split()]
        ),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # One session reads and writes thousands of small tables: a bigger heap than the 1 GiB default,
        # and no history of past queries kept for a UI nobody opens (it filled the heap by the end
        # of a main job, measured), or the JVM spends its time collecting garbage and then dies.
        "spark.driver.memory": os.environ.get("LAKECONF_SPARK_DRIVER_MEMORY", "2g"),
        "spark.sql.ui.retainedExecutions": "20",
        "spark.ui.retainedJobs": "20",
        "spark.ui.retainedStages": "20",
        "spark.ui.retainedTasks": "200",
        "spark.ui.dagGraph.retainedRootRDDs": "20",
        # Tiny tables: adaptive planning and shuffle partitions cost more than they save (5%, measured).
        "spark.sql.adaptive.enabled": "false",
    }
    if jars:
        conf["spark.jars"] = ",".join(jars)
    else:
        conf["spark.jars.packages"] = ",".join(packages(line, formats, s3=s3))
    conf.update(format_conf(line, formats))
    for item in os.environ.get("LAKECONF_SPARK_CONF", "").split(";"):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            conf[key.strip()] = value.strip()
    return conf


def get(*, line: str | None = None, formats: Sequence[str] | None = None, s3: bool | None = None):
    """The process's SparkSession, started on first call with the pinned runtimes."""
    from reference_impl.errors import Unsupported

    with _Session.lock:
        if _Session.spark is not None:
            missing = [f for f in (formats or ()) if f not in _Session.formats]
            if missing:
                raise Unsupported(
                    f"the Spark session was started without the {', '.join(missing)} runtime(s); "
                    "set LAKECONF_SPARK_FORMATS before the first Spark use",
                    feature=missing[0],
                )
            _Session.starts += 1
            return _Session.spark
        import pyspark
        from pyspark.sql import SparkSession

        spark_line = lines.line(line) if line else lines.line_for_pyspark(pyspark.__version__)
        if spark_line is None:
            raise Unsupported(
                f"pyspark {pyspark.__version__} has no pinned Spark line in conformance/engines/spark/lines.py "
                f"(pinned: {sorted(lines.LINES)})"
            )
        fmts = tuple(formats or env_formats(spark_line))
        use_s3 = s3 if s3 is not None else os.environ.get("LAKECONF_SPARK_S3", "1") != "0"
        log_dir = tempfile.mkdtemp(prefix="lakeconf-spark-")
        # The log directory lives as long as the process: the harness copies what a failed cell
        # logged into its report as it goes (before, every session left one behind in /tmp).
        atexit.register(shutil.rmtree, log_dir, ignore_errors=True)
        with open(os.path.join(log_dir, "log4j2.properties"), "w") as fh:
            fh.write(_LOG4J2.format(log=os.path.join(log_dir, "spark.log")))
        began = time.monotonic()
        pkgs = packages(spark_line, fmts, s3=use_s3)
        jars = read_jar_manifest(pkgs) if os.environ.get("LAKECONF_SPARK_RESOLVE") != "1" else None
        builder = SparkSession.builder
        for key, value in settings(spark_line, fmts, s3=use_s3, log_dir=log_dir, jars=jars).items():
            builder = builder.config(key, value)
        spark = _quietly(os.path.join(log_dir, "jvm.out"), builder.getOrCreate)
        if jars is None:
            resolved = spark.sparkContext.getConf().get("spark.jars", "")
            if resolved:
                write_jar_manifest(pkgs, [j for j in resolved.split(",") if j])
        spark.sparkContext.setLogLevel("ERROR")
        _Session.spark, _Session.line, _Session.formats, _Session.s3 = spark, spark_line, fmts, use_s3
        _Session.log_dir = log_dir
        _Session.first_start_s = time.monotonic() - began
        _Session.starts = 1
        _Session.state = {}
        return spark


def _quietly(path: str, start):
    """Run ``start`` (which launches the JVM) with fds 1 and 2 sent to ``path``.

    The JVM inherits the descriptors it is launched with, so its own banner and SLF4J notices go
    to the log directory instead of the terminal (and the CLI's one-line output stays clean).
    """
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream is fine
            pass
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(path, "ab") as sink:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
        return start()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)


# Several adapters of a process (and their threads) share the session: whoever changes what the
# session was told (a bucket's endpoint, a registered catalog) holds this while doing it.
state_lock = threading.RLock()


def state(key: str, default_factory):
    """Per-session state a driver keeps (created on first use, forgotten with the session)."""
    with state_lock:
        return _Session.state.setdefault(key, default_factory())


_active = threading.local()


def make_active(spark) -> None:
    """Make ``spark`` the active session of the calling thread. PySpark runs each Python thread's
    calls in a JVM thread of its own, and format runtimes look the session up there (one refused a
    table whose columns map by field id when the thread had none, measured with two reads at once:
    "spark.sql.parquet.fieldId.read.enabled must be enabled"); only the thread that built the
    session has it."""
    if getattr(_active, "spark", None) is not spark:
        spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
        _active.spark = spark


def scratch_dir() -> str:
    """A directory of the session's own for files Spark reads lazily (removed with the log directory at exit)."""
    path = os.path.join(_Session.log_dir or tempfile.gettempdir(), "scratch")
    os.makedirs(path, exist_ok=True)
    return path


def started_formats() -> tuple[str, ...]:
    """The formats whose runtimes the running session has."""
    return _Session.formats


def has_s3() -> bool:
    """Whether the running session has hadoop-aws."""
    return _Session.s3


def log_path() -> str | None:
    """Spark's log file of this process (WARN and above), once the session started."""
    return os.path.join(_Session.log_dir, "spark.log") if _Session.log_dir else None


def stop() -> None:
    """Stop the process's SparkSession (the next use starts a new one)."""
    with _Session.lock:
        spark, _Session.spark = _Session.spark, None
        if spark is not None:
            spark.stop()
        _Session.state = {}


def stats() -> dict[str, Any]:
    """Start-up time of the session and how often it was reused (for reports and benchmarks)."""
    return {
        "first_start_s": _Session.first_start_s,
        "uses": _Session.starts,
        "line": _Session.line.name if _Session.line else None,
        "formats": list(_Session.formats),
        "s3": _Session.s3,
    }
