"""Spark SQL spellings the drivers share: identifiers, literals, types, paths, and rows back as Arrow."""

from __future__ import annotations

import datetime as _dt
import os
from urllib.parse import urlparse

import pyarrow as pa


def quote_ident(name: str) -> str:
    """A back-quoted identifier."""
    return "`" + name.replace("`", "``") + "`"


def sql_string(value: str) -> str:
    """A single-quoted string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sql_type(t: pa.DataType) -> str:
    """The Spark SQL type name of an Arrow type (as used in CREATE TABLE / ADD COLUMNS)."""
    from reference_impl.errors import Unsupported

    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_int8(t):
        return "TINYINT"
    if pa.types.is_int16(t):
        return "SMALLINT"
    if pa.types.is_int32(t):
        return "INT"
    if pa.types.is_int64(t):
        return "BIGINT"
    if pa.types.is_float32(t):
        return "FLOAT"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "STRING"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "BINARY"
    if pa.types.is_date(t):
        return "DATE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP" if t.tz is not None else "TIMESTAMP_NTZ"
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"ARRAY<{sql_type(t.value_type)}>"
    if pa.types.is_map(t):
        return f"MAP<{sql_type(t.key_type)}, {sql_type(t.item_type)}>"
    if pa.types.is_struct(t):
        fields = ", ".join(f"{quote_ident(f.name)}: {sql_type(f.type)}{'' if f.nullable else ' NOT NULL'}" for f in t)
        return f"STRUCT<{fields}>"
    raise Unsupported(f"Arrow type {t} has no Spark SQL equivalent", feature=str(t))


def timestamp_literal(text: str) -> str:
    """An ISO timestamp as the UTC wall-clock text Spark's ``timestampAsOf`` takes."""
    value = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is not None:
        value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return value.isoformat(sep=" ", timespec="microseconds")


def ms_of(timestamp: str) -> int:
    """Milliseconds since the epoch of an ISO timestamp (UTC when naive), rounded down: a commit
    at millisecond m is current at m.999."""
    value = _dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    since = value - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
    return (since.days * 86_400 + since.seconds) * 1000 + since.microseconds // 1000


def to_arrow(df) -> pa.Table:
    """A DataFrame's rows as Arrow without pandas (``toArrow`` on Spark 4, the Arrow collector on 3.5)."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(df.schema)
    batches = df._collect_as_arrow()
    return pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()


def dataframe(spark, rows: pa.Table):
    """A DataFrame of Arrow ``rows`` with their exact types.

    Spark 4 takes an Arrow table directly. Spark 3.5 does not (its Arrow path goes through pandas,
    which turns nullable integers into floats and drops time zones), so there the rows are written
    to a Parquet file of the session's scratch directory and read back: Parquet carries every
    type, nested ones included, and its timestamps keep their UTC-adjusted flag (Spark 3.5 reads
    a zone-less one as TIMESTAMP_NTZ). The file is proleptic Gregorian by construction, so it is
    read as such (``CORRECTED``): without the option Spark 3.5 refuses dates before 1582 in files it
    did not write, which is its behaviour on a table, not the rows a case hands it. The file stays
    until the session stops, since Spark reads it lazily.
    """
    import pyspark

    if int(pyspark.__version__.split(".")[0]) >= 4:
        return spark.createDataFrame(rows)
    import uuid

    import pyarrow.parquet as pq

    from conformance.engines.spark import session

    scratch = session.scratch_dir()
    path = os.path.join(scratch, f"rows-{uuid.uuid4().hex}.parquet")
    pq.write_table(rows, path)
    reader = spark.read.option("datetimeRebaseMode", "CORRECTED").option("int96RebaseMode", "CORRECTED")
    return reader.parquet("file://" + path)


def select_columns(df, columns):
    """Only ``columns`` of ``df`` (a name like ``a.b`` is one column, not a struct field)."""
    return df.select(*[df[quote_ident(c)] for c in columns]) if columns else df


def spark_path(uri: str) -> str:
    """The location as Spark's Hadoop file systems want it: ``s3a://`` for S3, ``file:`` for disk."""
    parsed = urlparse(uri)
    if parsed.scheme in ("s3", "s3a"):
        return "s3a://" + uri.split("://", 1)[1]
    if parsed.scheme == "file":
        return uri
    if parsed.scheme == "" or len(parsed.scheme) == 1:
        return "file://" + os.path.abspath(uri)
    return uri
