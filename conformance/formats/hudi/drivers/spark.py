"""Hudi through hudi-spark (the ``hudi-spark3.5-bundle`` 1.2.0): reads and writes by path with the DataFrame API.

* Reads load the table directory (``spark.read.format("hudi").load(path)``). The kit's version N is the
  instant ``instants.point`` names (``as.of.instant``: its completion time in v8+, its requested time in v6);
  version 0 is the table before its first commit (no rows). A timestamp is the Hudi instant time it names. A
  ``read_optimized`` ref is ``hoodie.datasource.query.type=read_optimized`` (at a version too); an
  ``incremental:A:B`` ref is the incremental query with ``hoodie.datasource.read.begin.instanttime`` /
  ``end.instanttime`` (the instants of versions A and B; version 0 as the begin is the earliest instant).
* Writes are the datasource writes a Spark user runs (``df.write.format("hudi").options(...).save(path)``):
  the table is created by its first write, with the ``Create`` step's properties turned into write options
  (``TABLE_TO_WRITE``); a ``Create`` no write follows is Hudi's own table initialisation without a commit
  (``HoodieTableMetaClient`` builder: a write of no rows would commit an empty instant); ``Append`` is ``insert``, ``Upsert`` is ``upsert``, ``Delete``/``Update`` read the
  matching records and write them back with ``delete`` / ``upsert``, ``Overwrite`` is
  ``insert_overwrite_table``; ``Optimize`` is ``CALL run_compaction(op => 'scheduleandexecute')`` on a
  merge-on-read table and ``CALL run_clustering`` on a copy-on-write one. Every write passes the table's own
  version as ``hoodie.write.table.version`` with auto-upgrade off (hudi-spark 1.2 upgrades a v6 or v8 table to
  v9 otherwise), the metadata table off unless asked for, and ``hoodie.index.bloom.num_entries=100`` (the
  default bloom filter makes every base file about 435 KB).
* ``describe`` reports the config facts of ``hoodie.properties`` as Hudi's ``show_table_properties``
  procedure returns them; the per-read-point facts (action, partitions, file groups) are not reported (the
  procedures that tell them take catalog tables only).
* ``FailedWrite`` is ``Unsupported``: no public Spark API leaves a write half-done.
* Schema on read (``steps.py``): ``RenameColumn``, ``DropColumn``, ``MoveColumn``, ``AddColumnAt`` — and
  ``AddColumn`` / ``ChangeColumnType`` once the table keeps an InternalSchema history — are Spark SQL ``ALTER
  TABLE`` statements on a catalog table registered over the path for the statement (``CREATE TABLE ... USING hudi
  LOCATION``, dropped after; the data stays), with ``hoodie.schema.on.read.enable=true`` set in the session as
  Hudi's schema evolution page says. hudi-spark 1.2.0 refuses RENAME/DROP on a table with a commit under its
  default configs (``MissingSchemaFieldException``, apache/hudi#19766): the session also sets the issue's
  workaround ``hoodie.datasource.write.schema.allow.auto.evolution.column.drop=true``. Writes and reads of a table
  with a history pass ``hoodie.schema.on.read.enable=true`` too (what a user of such a table is told to set).

The runtime is pinned for the 3.5 line only: no ``hudi-spark4.0-bundle`` resolves from Maven Central.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

import pyarrow as pa

from conformance.engines.base import FormatSupport
from conformance.engines.spark import errors
from conformance.engines.spark.sql import dataframe, quote_ident, select_columns, spark_path, sql_string, to_arrow
from conformance.formats.hudi import facts as F
from conformance.formats.hudi import steps as HS
from conformance.formats.hudi.engines._common import data_columns
from conformance.model import (
    AddColumn,
    Append,
    ChangeColumnType,
    Create,
    Delete,
    DropColumn,
    MoveColumn,
    Optimize,
    Overwrite,
    RenameColumn,
    Step,
    TableRef,
    Update,
)
from reference_impl.errors import LakeconfError, Unsupported

# hudi-spark per Spark line (Maven Central, checked 2026-11): 1.2.0 for Spark 3.5; no bundle for Spark 4.0.
RUNTIMES = {"3.5": "org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0"}
SESSION_CONF = {
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    # Hudi's documented Spark settings (quick start): Kryo, with Hudi's classes registered.
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    # The quick start's session catalog: Spark >= 3.2.1 runs Hudi's ALTER TABLE RENAME/DROP/ALTER COLUMN only
    # through it (HUDI-EVOLR-002). A session shared with Delta keeps Delta's catalog (first format wins): the
    # schema-on-read steps then refuse with Spark's UNSUPPORTED_FEATURE.TABLE_OPERATION.
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
}

WRITE_STEPS = frozenset({"Create", "Append", "Upsert", "Delete", "Update", "Overwrite", "Optimize", "RenameColumn",
                         "DropColumn", "MoveColumn", "AddColumnAt", "AddColumn", "ChangeColumnType"})
# AddColumn / ChangeColumnType run as schema-on-read ALTERs only (module docstring); on a table without an
# InternalSchema history they stay the on-write evolution the driver does not run (reason below).
ON_WRITE_EVOLUTION_GAP = "not run by the kit's Hudi Spark driver yet (Hudi evolves the schema on the next write)"
WRITE_GAPS: Mapping[str, str] = {
    "FailedWrite": "a Spark write either completes its instant or fails before the kit can stop it half-way: "
                   "no public API leaves a requested/inflight instant with its data files behind",
}
SCHEMA_ON_READ = "hoodie.schema.on.read.enable"
# Session settings of an ALTER under schema on read (module docstring; the second is apache/hudi#19766's workaround).
SOR_SESSION = {SCHEMA_ON_READ: "true", "hoodie.datasource.write.schema.allow.auto.evolution.column.drop": "true"}

# hudi-spark 1.2.0's words for a table it cannot or will not read.
ERRORS = errors.ErrorPatterns(
    unsupported=(
        "java.lang.UnsupportedOperationException",
        "HoodieNotSupportedException",
        "is not supported",
        "Unsupported table version",
    ),
    unsupported_types=("UnsupportedOperationException",),
    invalid=(
        "TableNotFoundException",  # no .hoodie / hoodie.properties there
        "Hoodie table not found",
        "InvalidTableException",
        "PATH_NOT_FOUND",
    ),
    invalid_on_read=(
        "HoodieIOException",
        "HoodieCorruptedDataException",
        "CorruptedLogFileException",  # a log block whose framing does not hold (on S3 it refuses what it skips locally)
        "java.io.FileNotFoundException",
        "FileNotFoundException",
        "ParquetDecodingException",
        "is not a Parquet file",
        "HoodieMetadataException",
        # a schema-on-read table whose InternalSchema history Hudi cannot parse (Jackson / SerDeHelper)
        "JsonEOFException",
        "JsonParseException",
        "Invalid value of Type",
    ),
)

# Create.properties (Hudi table-config names, steps.py) -> the datasource write options that produce them.
TABLE_TO_WRITE = {
    "hoodie.table.recordkey.fields": "hoodie.datasource.write.recordkey.field",
    "hoodie.table.type": "hoodie.datasource.write.table.type",
    "hoodie.table.version": "hoodie.write.table.version",
    "hoodie.table.ordering.fields": "hoodie.datasource.write.precombine.field",
    "hoodie.table.precombine.field": "hoodie.datasource.write.precombine.field",
    "hoodie.table.keygenerator.type": "hoodie.datasource.write.keygenerator.type",
    "hoodie.table.partition.fields": "hoodie.datasource.write.partitionpath.field",
}
# Fixed write options of every write (see the module docstring).
WRITE_DEFAULTS = {
    "hoodie.metadata.enable": "false",
    "hoodie.index.bloom.num_entries": "100",
    "hoodie.write.auto.upgrade": "false",
    # One small file group per partition: the kit's tables are tiny and their layout must not depend on
    # Spark's task count.
    "hoodie.insert.shuffle.parallelism": "1",
    "hoodie.upsert.shuffle.parallelism": "1",
    "hoodie.delete.shuffle.parallelism": "1",
    "hoodie.bulkinsert.shuffle.parallelism": "1",
    # The kit reads the table right after a write: no async services, no automatic cleaning or archiving
    # that would remove the files of the versions a case reads.
    "hoodie.clean.automatic": "false",
    "hoodie.archive.automatic": "false",
    "hoodie.compact.inline": "false",
}
META_PREFIX = "_hoodie_"


def translate(exc: BaseException, where: str, *, reading: bool = False) -> BaseException:
    """A hudi-spark exception as the kit's error kinds."""
    return errors.translate(exc, where=where, patterns=ERRORS, reading=reading)


def hudi_path(uri: str) -> str:
    return spark_path(uri).rstrip("/")


def _storage(table: TableRef):
    from conformance.formats.hudi.engines._common import storage_of

    return storage_of(table)


def _table_config(table: TableRef) -> dict[str, str] | None:
    """``hoodie.properties`` as a dict (None: no table there yet)."""
    from reference_impl.hudi.properties import parse_properties

    storage = _storage(table)
    path = ".hoodie/hoodie.properties"
    if not storage.exists(path):
        return None
    return dict(parse_properties(storage.read(path)))


# ----------------------------------------------------------------------------------------------
# Reads
# ----------------------------------------------------------------------------------------------


def has_history(table: TableRef) -> bool:
    """Whether the table keeps an InternalSchema history (``.hoodie/.schema``): a schema-on-read table."""
    return any(f.path.endswith(".schemacommit") for f in _storage(table).list(".hoodie/.schema"))


def _reader(spark, table: TableRef, *, at=None, timestamp=None, ref=None):
    """(DataFrameReader with the read point's options, whether the read is of version 0)."""
    from conformance.formats.hudi.engines._common import read_point

    rp = read_point(table, at=at, timestamp=timestamp, ref=ref)
    reader = spark.read.format("hudi")
    if has_history(table):
        reader = reader.option(SCHEMA_ON_READ, "true")
    if rp.query == F.INCREMENTAL:
        reader = reader.option("hoodie.datasource.query.type", "incremental")
        # The begin instant is exclusive; version 0 (the created table) is before every instant.
        reader = reader.option("hoodie.datasource.read.begin.instanttime", rp.begin or "000")
        if rp.end is not None:
            reader = reader.option("hoodie.datasource.read.end.instanttime", rp.end)
    else:
        if rp.query == F.READ_OPTIMIZED:
            reader = reader.option("hoodie.datasource.query.type", "read_optimized")
        if rp.as_of is not None:
            reader = reader.option("as.of.instant", rp.as_of)
    return reader, rp.empty


def _read(spark, table: TableRef, *, at=None, timestamp=None, ref=None, columns=None) -> pa.Table:
    reader, empty = _reader(spark, table, at=at, timestamp=timestamp, ref=ref)
    df = reader.load(hudi_path(table.uri))
    if empty:
        df = df.limit(0)
    return to_arrow(select_columns(df, columns))


def _list(value: str | None) -> list[str]:
    return [v.strip().split(":", 1)[0] for v in (value or "").split(",") if v.strip()]


def _describe(spark, table: TableRef, *, at=None, timestamp=None, ref=None) -> dict[str, Any]:
    """The table's config facts as ``CALL show_table_properties(path => ...)`` returns ``hoodie.properties``.

    hudi-spark 1.2 gives a path-addressed table no more than that: ``show_commits`` and the file-system-view
    procedures take a catalog table only ("Argument: table is required"), so the action and the file groups
    of a read point are not reported (the harness marks the facts partial). The read point is still checked
    (a version the table lacks is an ``InvalidTable``)."""
    from conformance.formats.hudi.engines._common import read_point

    read_point(table, at=at, timestamp=timestamp, ref=ref)
    path = hudi_path(table.uri)
    props = {r[0]: r[1] for r in spark.sql(f"CALL show_table_properties(path => {sql_string(path)}, limit => 1000)").collect()}
    facts: dict[str, Any] = {
        "table_type": props.get("hoodie.table.type"),
        "table_version": int(props["hoodie.table.version"]) if "hoodie.table.version" in props else None,
        "record_key_fields": _list(props.get("hoodie.table.recordkey.fields")),
        "partition_fields": _list(props.get("hoodie.table.partition.fields")),
        "ordering_fields": _list(props.get("hoodie.table.ordering.fields") or props.get("hoodie.table.precombine.field")),
    }
    if props.get("hoodie.record.merge.mode"):
        facts["merge_mode"] = props["hoodie.record.merge.mode"]
    return facts


# ----------------------------------------------------------------------------------------------
# Writes
# ----------------------------------------------------------------------------------------------


def create_options(table: TableRef, step: Create) -> dict[str, str]:
    """The write options that create the table ``step`` describes (its properties by their write names)."""
    if step.features:
        raise Unsupported(f"Hudi has no table features to enable ({', '.join(step.features)}); configs decide",
                          feature=step.features[0])
    props = {str(k): str(v) for k, v in step.properties.items()}
    if "hoodie.table.recordkey.fields" not in props:
        raise Unsupported("a Hudi table needs hoodie.table.recordkey.fields (steps.py)", feature="Create")
    opts: dict[str, str] = {}
    for key, value in props.items():
        opts[TABLE_TO_WRITE.get(key, key)] = value
    if step.partition_by:
        opts["hoodie.datasource.write.partitionpath.field"] = ",".join(step.partition_by)
    opts.setdefault("hoodie.datasource.write.partitionpath.field", "")
    parts = _list(opts["hoodie.datasource.write.partitionpath.field"])
    if "hoodie.datasource.write.keygenerator.type" not in opts:
        opts["hoodie.datasource.write.keygenerator.type"] = (
            "NON_PARTITIONED" if not parts else "SIMPLE" if len(parts) == 1 and "," not in
            opts["hoodie.datasource.write.recordkey.field"] else "COMPLEX")
    # hudi-spark 1.2 reads the merge mode of a write from the write config's key (hoodie.write.record.merge.mode);
    # the table config's key alone is overridden by the mode the default payload class implies (EVENT_TIME)
    if opts.get("hoodie.record.merge.mode"):
        opts.setdefault("hoodie.write.record.merge.mode", opts["hoodie.record.merge.mode"])
    # a key generator type Spark's writer does not map to its class by itself (measured: TIMESTAMP wrote SIMPLE)
    if opts.get("hoodie.datasource.write.keygenerator.type", "").upper() == "TIMESTAMP":
        opts.setdefault("hoodie.datasource.write.keygenerator.class", "org.apache.hudi.keygen.TimestampBasedKeyGenerator")
    opts.setdefault("hoodie.table.name", props.get("hoodie.table.name") or _name(table))
    opts.setdefault("hoodie.datasource.write.table.type", "COPY_ON_WRITE")
    opts.setdefault("hoodie.write.table.version", "9")
    return opts


def _name(table: TableRef) -> str:
    """A table name Hudi accepts, from the directory's name."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", table.uri.rstrip("/").rsplit("/", 1)[-1]) or "t"
    return base if base[0].isalpha() else "t_" + base


def existing_options(config: Mapping[str, str]) -> dict[str, str]:
    """The write options that keep writing an existing table as it is (from its ``hoodie.properties``)."""
    opts = {
        "hoodie.table.name": config.get("hoodie.table.name", "t"),
        "hoodie.datasource.write.recordkey.field": config.get("hoodie.table.recordkey.fields", ""),
        "hoodie.datasource.write.table.type": config.get("hoodie.table.type", "COPY_ON_WRITE"),
        "hoodie.write.table.version": config.get("hoodie.table.version", "9"),
        "hoodie.datasource.write.partitionpath.field": ",".join(_list(config.get("hoodie.table.partition.fields"))),
    }
    ordering = config.get("hoodie.table.ordering.fields") or config.get("hoodie.table.precombine.field")
    if ordering:
        opts["hoodie.datasource.write.precombine.field"] = ordering
    for key, write_key in (("hoodie.table.keygenerator.class", "hoodie.datasource.write.keygenerator.class"),
                           ("hoodie.table.keygenerator.type", "hoodie.datasource.write.keygenerator.type")):
        if config.get(key):
            opts[write_key] = config[key]
    for key in ("hoodie.datasource.write.hive_style_partitioning", "hoodie.datasource.write.partitionpath.urlencode",
                "hoodie.record.merge.mode", "hoodie.compaction.payload.class"):
        if config.get(key):
            opts[key] = config[key]
    if opts.get("hoodie.record.merge.mode"):  # the write config's key decides (see create_options)
        opts["hoodie.write.record.merge.mode"] = opts["hoodie.record.merge.mode"]
    # A table whose Create turned the metadata table on keeps it: a write with it off deletes it (Hudi does).
    if config.get("hoodie.table.metadata.partitions", "").strip():
        opts["hoodie.metadata.enable"] = "true"
    return opts


def _position(after: str | None, first: bool) -> str:
    return " FIRST" if first else f" AFTER {_path_sql(after)}" if after else ""


def _path_sql(path: str) -> str:
    """A (nested) column path as Hudi's DDL takes it: dotted, each part quoted."""
    return ".".join(quote_ident(p) for p in path.split("."))


# Steps that are always an ALTER TABLE under schema on read (AddColumn / ChangeColumnType are one only on a
# table that already keeps a history).
ALTER_STEPS = frozenset({"RenameColumn", "DropColumn", "MoveColumn", "AddColumnAt"})


def need_hoodie_catalog(spark) -> None:
    """Refuse (Unsupported) unless Spark's session catalog is Hudi's, as its ALTER TABLE needs (HUDI-EVOLR-002)."""
    catalog = spark.conf.get("spark.sql.catalog.spark_catalog", "")
    if catalog != SESSION_CONF["spark.sql.catalog.spark_catalog"]:
        raise Unsupported(f"Hudi's ALTER TABLE under schema on read needs HoodieCatalog as Spark's session catalog "
                          f"(HUDI-EVOLR-002); this session shares {catalog or 'the default catalog'} with another "
                          "format: run with LAKECONF_SPARK_FORMATS=hudi", feature="hudi-schema-on-read")


class _Writer:
    """One table's writes: the options of its Create (or its hoodie.properties), one datasource write a step."""

    def __init__(self, spark, table: TableRef) -> None:
        self.spark, self.table = spark, table
        self.path = hudi_path(table.uri)
        self.created: dict[str, str] | None = None  # options of a Create not yet written

    def options(self, operation: str) -> dict[str, str]:
        if self.created is not None:
            opts = dict(self.created)
        else:
            config = _table_config(self.table)
            if config is None:
                raise Unsupported("the Hudi table does not exist yet: a Create step comes first", feature="Create")
            opts = existing_options(config)
        out = {**WRITE_DEFAULTS, **opts, "hoodie.datasource.write.operation": operation}
        if self.created is None and has_history(self.table):
            out[SCHEMA_ON_READ] = "true"  # keeps the history and latest_schema going (module docstring)
        return out

    def save(self, df, operation: str) -> None:
        df.write.format("hudi").options(**self.options(operation)).mode("append").save(self.path)
        self.created = None

    def rows(self, rows: pa.Table):
        df = dataframe(self.spark, rows)
        return df.coalesce(1)

    def current(self):
        """The table's latest rows without meta columns (what a Spark user rewrites for DELETE/UPDATE)."""
        df = self.spark.read.format("hudi").load(self.path)
        return df.select(*[quote_ident(c) for c in df.columns if not c.startswith(META_PREFIX)])

    def alter(self, clause: str) -> None:
        """One ``ALTER TABLE <t> <clause>`` under schema on read, on a catalog table registered over the path."""
        from conformance.engines.spark.sql import sql_string as lit

        if self.created is not None:
            raise Unsupported("hudi-spark alters a table with a commit: write rows before the first ALTER",
                              feature="hudi-schema-on-read")
        need_hoodie_catalog(self.spark)
        config = _table_config(self.table) or {}
        settings = {**SOR_SESSION, "hoodie.metadata.enable": existing_options(config).get("hoodie.metadata.enable",
                                                                                          "false"),
                    "hoodie.write.auto.upgrade": "false",
                    "hoodie.write.table.version": config.get("hoodie.table.version", "9")}
        for key, value in settings.items():
            self.spark.sql(f"SET {key}={value}")
        name = "lakeconf_alter_" + re.sub(r"[^A-Za-z0-9_]", "_", _name(self.table))
        self.spark.sql(f"DROP TABLE IF EXISTS {name}")
        self.spark.sql(f"CREATE TABLE {name} USING hudi LOCATION {lit(self.path)}")
        try:
            self.spark.sql(f"ALTER TABLE {name} {clause}")
        finally:
            self.spark.sql(f"DROP TABLE IF EXISTS {name}")  # an external table: the files stay
            for key in settings:  # the session serves other tables next: their writes name their own
                self.spark.conf.unset(key)

    def run(self, step: Step) -> None:
        from conformance.engines.spark.sql import sql_type

        if isinstance(step, RenameColumn):
            parent, _, leaf = step.new.rpartition(".")
            self.alter(f"RENAME COLUMN {_path_sql(step.old)} TO {quote_ident(leaf)}")
        elif isinstance(step, DropColumn):
            self.alter(f"DROP COLUMN {_path_sql(step.name)}")
        elif isinstance(step, MoveColumn):
            self.alter(f"ALTER COLUMN {_path_sql(step.name)}{_position(step.after, step.after is None)}")
        elif isinstance(step, HS.AddColumnAt):
            self.alter(f"ADD COLUMNS ({_path_sql(step.path)} {sql_type(step.type)}{_position(step.after, step.first)})")
        elif isinstance(step, AddColumn):
            self.alter(f"ADD COLUMNS ({_path_sql(step.field.name)} {sql_type(step.field.type)})")
        elif isinstance(step, ChangeColumnType):
            self.alter(f"ALTER COLUMN {_path_sql(step.name)} TYPE {sql_type(step.type)}")
        elif isinstance(step, Create):
            self.created = create_options(self.table, step)
        elif isinstance(step, Append):
            if step.branch is not None:
                raise Unsupported("Hudi tables have no branches", feature="branch")
            self.save(self.rows(step.rows), "insert")
        elif isinstance(step, HS.Upsert):
            self.save(self.rows(step.rows), "upsert")
        elif isinstance(step, Delete):
            if step.how not in (None, "copy-on-write"):
                raise Unsupported(f"Hudi has no {step.how}: a delete rewrites base files (COW) or appends delete "
                                  "blocks (MOR)", feature=step.how)
            matching = self.current().where(step.where)
            self.save(matching.coalesce(1), "delete")
        elif isinstance(step, Update):
            from pyspark.sql import functions as SF

            matching = self.current().where(step.where)
            cols = [SF.expr(step.set[c]).cast(matching.schema[c].dataType).alias(c) if c in step.set
                    else matching[quote_ident(c)] for c in matching.columns]
            self.save(matching.select(*cols).coalesce(1), "upsert")
        elif isinstance(step, Overwrite):
            self.save(self.rows(step.rows), "insert_overwrite_table")
        elif isinstance(step, Optimize):
            self.optimize()
        else:  # pragma: no cover - write() filtered these
            raise Unsupported(f"spark cannot run a {type(step).__name__} step on hudi tables")

    def optimize(self) -> None:
        config = _table_config(self.table) or {}
        path = sql_string(self.path)
        # Hudi's procedures take their write configs from the session (SET), not from write options: without
        # these the compaction creates the metadata table and writes a 435 KB bloom filter into the new base file
        # (measured), and a v6/v8 table would be upgraded.
        settings = {key: WRITE_DEFAULTS[key] for key in ("hoodie.index.bloom.num_entries", "hoodie.write.auto.upgrade")}
        settings["hoodie.metadata.enable"] = existing_options(config).get("hoodie.metadata.enable", "false")
        for key, value in settings.items():
            self.spark.sql(f"SET {key}={value}")
        self.spark.sql(f"SET hoodie.write.table.version={config.get('hoodie.table.version', '9')}")
        if config.get("hoodie.table.type") == "MERGE_ON_READ":
            # A compaction plan is scheduled only when enough delta commits piled up (5 by default).
            self.spark.sql("SET hoodie.compact.inline.max.delta.commits=1")
            self.spark.sql(f"CALL run_compaction(op => 'scheduleandexecute', path => {path})").collect()
        else:
            self.spark.sql(f"CALL run_clustering(path => {path})").collect()

    def finish(self) -> None:
        """A Create that no write followed: the table at version 0, created without a commit.

        A datasource write of no rows commits an empty instant (a version 1, measured), so the table is
        initialised the way hudi-spark's own writer does before its first commit: Hudi's
        ``HoodieTableMetaClient.newTableBuilder().fromProperties(<table configs>).initTable(...)``."""
        if self.created is None:
            return
        opts = self.created
        write_to_table = {v: k for k, v in TABLE_TO_WRITE.items() if k != "hoodie.table.precombine.field"}
        jvm = self.spark._jvm
        props = jvm.org.apache.hudi.common.config.TypedProperties()
        for key, value in opts.items():
            props.setProperty(write_to_table.get(key, key), value)
        props.setProperty("hoodie.table.name", opts["hoodie.table.name"])
        builder = jvm.org.apache.hudi.common.table.HoodieTableMetaClient.newTableBuilder().fromProperties(props)
        conf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(self.spark._jsc.hadoopConfiguration())
        builder.initTable(conf, self.path)
        self.created = None


# ----------------------------------------------------------------------------------------------
# The driver interface
# ----------------------------------------------------------------------------------------------


def available(engine: Any) -> str | None:
    line = getattr(getattr(engine, "line", None), "name", None)
    if line is not None and line not in RUNTIMES:
        return (f"no hudi-spark bundle for Spark {line} resolves from Maven Central (hudi-spark3.5-bundle_2.12 "
                f"1.2.0 is pinned for Spark 3.5 only)")
    return None


def support(engine: Any) -> FormatSupport:
    """Every read feature (hudi-spark is Hudi's own reader); the write steps above."""
    return FormatSupport(write_steps=WRITE_STEPS)


def read(engine: Any, table: TableRef, *, at=None, timestamp=None, ref=None, columns=None) -> pa.Table:
    spark = engine.session(table)
    try:
        return data_columns(_read(spark, table, at=at, timestamp=timestamp, ref=ref, columns=columns))
    except LakeconfError:
        raise
    except Exception as exc:
        raise translate(exc, table.uri, reading=True) from None


def describe(engine: Any, table: TableRef, *, at=None, timestamp=None, ref=None) -> dict:
    spark = engine.session(table)
    try:
        return _describe(spark, table, at=at, timestamp=timestamp, ref=ref)
    except LakeconfError:
        raise
    except Exception as exc:
        raise translate(exc, table.uri, reading=True) from None


def write(engine: Any, table: TableRef, steps: Sequence[Step]) -> None:
    for step in steps:
        name = type(step).__name__
        if name not in WRITE_STEPS:
            reason = WRITE_GAPS.get(name, f"spark cannot run a {name} step on hudi tables")
            raise Unsupported(reason, feature=name)
    # Refused before the first write, so a table the driver cannot finish is never half-built: an on-write
    # evolution step (AddColumn / ChangeColumnType before any ALTER, on a table without a history), and any
    # ALTER in a session whose catalog is not Hudi's.
    history = has_history(table)
    for step in steps:
        name = type(step).__name__
        if name in ALTER_STEPS:
            break
        if name in ("AddColumn", "ChangeColumnType") and not history:
            raise Unsupported(ON_WRITE_EVOLUTION_GAP, feature=name)
    spark = engine.session(table)
    if any(type(step).__name__ in ALTER_STEPS for step in steps):
        need_hoodie_catalog(spark)
    writer = _Writer(spark, table)
    for step in list(steps) + [None]:
        try:
            if step is None:
                writer.finish()
            else:
                writer.run(step)
        except LakeconfError:
            raise
        except Exception as exc:
            raise translate(exc, f"{table.uri} ({type(step).__name__ if step else 'Create'})") from None


def reproduce(engine: Any, table, at=None) -> str | None:
    """``read()`` through PySpark with hudi-spark (``lakeconf findings export``)."""
    if at == 0:
        return None
    option = ""
    if at:
        from conformance.formats.hudi.engines._common import read_point

        option = f".option('as.of.instant', {read_point(table, at=at).as_of!r})"
    return (
        "def read():\n"
        "    import pyarrow as pa\n"
        "    from pyspark.sql import SparkSession\n"
        "    spark = (SparkSession.builder.master('local[1]')\n"
        f"             .config('spark.jars.packages', {RUNTIMES['3.5']!r})\n"
        + "".join(f"             .config({k!r}, {v!r})\n" for k, v in SESSION_CONF.items())
        + "             .getOrCreate())\n"
        f"    df = spark.read.format('hudi'){option}.load(TABLE)\n"
        "    return pa.Table.from_pandas(df.toPandas())\n"
    )
