"""The pinned Spark lines: one engine each (``spark`` for the newest, ``spark-<line>`` for the others).

A line pins Spark itself (the pyspark release, its Scala and Hadoop versions, the AWS SDK that
``hadoop-aws`` of that Hadoop was built with); each format's Spark runtime for a line is pinned by
the format's Spark driver (``RUNTIMES``), next to the code that uses it.

Why these lines (checked against Maven Central metadata and the projects' release notes, 2026-11):
* Spark 4.0 ships Hadoop 3.4.1; ``hadoop-aws`` must match it exactly, and 3.4.1 is built against
  the AWS SDK v2 bundle 2.24.6 (hadoop-project 3.4.1 ``aws-java-sdk-v2.version``).
* Spark 3.5 (Scala 2.12, Hadoop 3.3.4, whose hadoop-aws still uses the v1 ``aws-java-sdk-bundle``
  1.12.262) is the newest line on which every format the kit knows publishes a Spark runtime
  that resolves from Maven Central here.

pyspark 3.5 and 4.0 cannot share one Python environment: a line whose pyspark is not the one
installed runs in an interpreter of its own (``conformance.engines.spark.remote``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class SparkLine:
    """One Spark release line."""

    name: str  # "4.0"
    pyspark: str  # the pip version of pyspark
    scala: str  # binary Scala version of the jars
    hadoop: str  # Hadoop version Spark ships (hadoop-aws must equal it)
    aws_sdk_bundle: str  # the AWS SDK bundle hadoop-aws was built with
    # JVMs the line's engine runs side by side in a run (``conformance.engines.spark.workers``). One:
    # on two cores a second JVM of a line made a run slower (its JIT and heap compete with the first
    # for the same cores: 198 s against 154 s for 27 tables and 240 cells, measured).
    workers: int = 1
    # Reads each JVM runs at once (``conformance.engines.spark.calls``; writes run alone). Two: a
    # small read keeps about one core busy, and a main job ended with minutes of Spark 3.5's reads
    # alone on a half-idle machine; with two, the run took 775 s instead of 927 s (idle CPU 51
    # core-s instead of 186, the same verdicts; measured on 2 cores).
    calls: int = 2

    @property
    def engine(self) -> str:
        """The engine name of this line in ``--engines`` and the report."""
        return "spark" if self.name == DEFAULT_LINE else f"spark-{self.name}"

    def s3_packages(self) -> list[str]:
        """hadoop-aws and the AWS SDK it needs (named, so the version stays visible and pinned)."""
        sdk = (f"com.amazonaws:aws-java-sdk-bundle:{self.aws_sdk_bundle}" if self.aws_sdk_bundle.startswith("1.")
               else f"software.amazon.awssdk:bundle:{self.aws_sdk_bundle}")
        return [f"org.apache.hadoop:hadoop-aws:{self.hadoop}", sdk]


LINES: dict[str, SparkLine] = {
    "4.0": SparkLine(name="4.0", pyspark="4.0.5", scala="2.13", hadoop="3.4.1", aws_sdk_bundle="2.24.6"),
    "3.5": SparkLine(name="3.5", pyspark="3.5.9", scala="2.12", hadoop="3.3.4", aws_sdk_bundle="1.12.262"),
}
DEFAULT_LINE = "4.0"


def line(name: str | None = None) -> SparkLine:
    """The pinned line ``name`` (default: LAKECONF_SPARK_LINE, else the newest)."""
    import os

    key = name or os.environ.get("LAKECONF_SPARK_LINE") or DEFAULT_LINE
    try:
        return LINES[key]
    except KeyError:
        raise KeyError(f"no pinned Spark line {key!r}; known: {sorted(LINES)}") from None


def line_for_pyspark(version: str) -> SparkLine | None:
    """The pinned line whose major.minor matches a pyspark version."""
    return LINES.get(".".join(version.split(".")[:2]))


def installed_pyspark() -> str | None:
    """The pyspark version of this interpreter, or None (without importing pyspark)."""
    from importlib import metadata

    try:
        return metadata.version("pyspark")
    except metadata.PackageNotFoundError:
        return None
