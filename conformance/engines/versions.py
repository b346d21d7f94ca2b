"""Every Java-side version the kit uses, pinned in one place: the Spark line and each format's runtime.

Why Spark 4.0 (checked against Maven Central metadata and the projects' release notes, 2026-11):
the newest Spark line for which Delta, Iceberg, Hudi AND Paimon all publish a Spark runtime.
* Spark 4.1/4.2: Delta (``delta-spark_4.1_2.13``) and Iceberg (``iceberg-spark-runtime-4.1_2.13``)
  publish, Paimon does not (its Spark 4 module is ``paimon-spark-4.0`` only), so 4.1 is not it.
* Spark 4.0: ``delta-spark_4.0_2.13`` 4.4.0 (built against Spark 4.0.1), ``iceberg-spark-runtime-4.0_2.13``
  1.11.0 (its last release for 4.0), ``hudi-spark4.0-bundle_2.13`` 1.2.0, ``paimon-spark-4.0_2.13``
  1.4.2.
Spark 4.0 ships Hadoop 3.4.1; ``hadoop-aws`` must match it exactly, and 3.4.1 is built against the
AWS SDK v2 bundle 2.24.6 (hadoop-project 3.4.1 ``aws-java-sdk-v2.version``), pulled transitively.

Spark 3.5 (Scala 2.12) is kept as a second line for engines that have not moved to Spark 4.

A line lists Maven coordinates; ``packages(line, formats)`` returns the ``spark.jars.packages``
value. Changing a version here is the only edit needed to move a line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

FORMATS = ("delta", "iceberg", "hudi", "paimon")


@dataclass(frozen=True, slots=True, kw_only=True)
class SparkLine:
    """One Spark release line and the runtimes that go with it."""

    name: str  # "4.0"
    pyspark: str  # the pip version of pyspark
    scala: str  # binary Scala version of the jars
    hadoop: str  # Hadoop version Spark ships (hadoop-aws must equal it)
    aws_sdk_bundle: str  # software.amazon.awssdk:bundle hadoop-aws was built with
    runtimes: Mapping[str, str] = field(default_factory=dict)  # format -> group:artifact:version
    # Spark session settings each format needs besides its jar (extensions, catalogs).
    session_conf: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)  # format -> known problem

    @property
    def hadoop_aws(self) -> str:
        """Maven coordinate of hadoop-aws for this line."""
        return f"org.apache.hadoop:hadoop-aws:{self.hadoop}"

    @property
    def aws_bundle(self) -> str:
        """Maven coordinate of the AWS SDK v2 bundle hadoop-aws needs."""
        return f"software.amazon.awssdk:bundle:{self.aws_sdk_bundle}"


_DELTA_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}
_ICEBERG_CONF = {
    "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
}
_HUDI_CONF = {
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
}
_PAIMON_CONF = {
    "spark.sql.extensions": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
}

SPARK_LINES: dict[str, SparkLine] = {
    "4.0": SparkLine(
        name="4.0",
        pyspark="4.0.5",
        scala="2.13",
        hadoop="3.4.1",
        aws_sdk_bundle="2.24.6",
        runtimes={
            "delta": "io.delta:delta-spark_4.0_2.13:4.4.0",
            "iceberg": "org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.11.0",
            "hudi": "org.apache.hudi:hudi-spark4.0-bundle_2.13:1.2.0",
            "paimon": "org.apache.paimon:paimon-spark-4.0_2.13:1.4.2",
        },
        session_conf={"delta": _DELTA_CONF, "iceberg": _ICEBERG_CONF, "hudi": _HUDI_CONF, "paimon": _PAIMON_CONF},
        notes={
            "hudi": "not resolvable through this workplace's Maven Central mirror (404) as of 2026-11-22",
            "paimon": "not resolvable through this workplace's Maven Central mirror (404) as of 2026-11-22",
        },
    ),
    "3.5": SparkLine(
        name="3.5",
        pyspark="3.5.9",
        scala="2.12",
        hadoop="3.3.4",
        aws_sdk_bundle="1.12.262",  # hadoop-aws 3.3.4 still uses SDK v1 (aws-java-sdk-bundle)
        runtimes={
            "delta": "io.delta:delta-spark_2.12:3.3.2",
            "iceberg": "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.12.0",
            "hudi": "org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0",
            "paimon": "org.apache.paimon:paimon-spark-3.5:0.9.0",
        },
        session_conf={"delta": _DELTA_CONF, "iceberg": _ICEBERG_CONF, "hudi": _HUDI_CONF, "paimon": _PAIMON_CONF},
    ),
}

DEFAULT_LINE = "4.0"


def spark_line(name: str | None = None) -> SparkLine:
    """The pinned line ``name`` (default: LAKECONF_SPARK_LINE, else the newest)."""
    import os

    key = name or os.environ.get("LAKECONF_SPARK_LINE") or DEFAULT_LINE
    try:
        return SPARK_LINES[key]
    except KeyError:
        raise KeyError(f"no pinned Spark line {key!r}; known: {sorted(SPARK_LINES)}") from None


def line_for_pyspark(version: str) -> SparkLine | None:
    """The pinned line whose major.minor matches an installed pyspark version."""
    return SPARK_LINES.get(".".join(version.split(".")[:2]))


def packages(line: SparkLine, formats: Iterable[str] = ("delta",), *, s3: bool = False) -> list[str]:
    """The Maven coordinates for ``spark.jars.packages``: the formats' runtimes (+ s3a jars)."""
    out = []
    for fmt in formats:
        if fmt not in line.runtimes:
            raise KeyError(f"Spark line {line.name} pins no runtime for format {fmt!r}")
        out.append(line.runtimes[fmt])
    if s3:
        # hadoop-aws brings its SDK transitively; naming it keeps the version visible and pinned.
        out.append(line.hadoop_aws)
        if line.aws_sdk_bundle.startswith("1."):
            out.append(f"com.amazonaws:aws-java-sdk-bundle:{line.aws_sdk_bundle}")
        else:
            out.append(line.aws_bundle)
    return out


def session_conf(line: SparkLine, formats: Iterable[str]) -> dict[str, str]:
    """Spark settings the formats need; extensions of several formats are joined with commas."""
    conf: dict[str, str] = {}
    for fmt in formats:
        for key, value in line.session_conf.get(fmt, {}).items():
            if key == "spark.sql.extensions" and key in conf and value not in conf[key].split(","):
                conf[key] = conf[key] + "," + value
            else:
                conf.setdefault(key, value)
    return conf
