"""Apache Paimon's own Java implementation (``org.apache.paimon:paimon-bundle`` 1.4.2) as a reader and a writer engine.

``LakeconfPaimon.java`` reads a table through Paimon's public Java API (``FileStoreTableFactory``,
``table.copy`` with ``scan.snapshot-id`` / ``scan.tag-name`` / ``scan.timestamp-millis``,
``switchToBranch``, ``ReadBuilder`` -> splits -> ``RecordReader<InternalRow>``) and writes the rows
as JSON lines, every value lossless (see the Java file's header); this module turns them into Arrow
with the kit's own Paimon type mapping (``reference_impl.paimon.types.to_arrow``), so the rows
compare with the reference's as the same logical types.

One JVM serves every read of the engine (``LakeconfPaimon serve``: a JSON array of arguments per
line on its stdin, one JSON answer per line on its stdout), started on the first read or by
``start()``, restarted if it dies, killed on a timeout and by ``close()``. The jars and the compiled
class are built once into the kit's cache (``jars.py``).

Exit codes of the Java side (the command contract's): 3 unsupported, 4 invalid table (the reason is
the message), anything else an error that is no verdict on the table.

The module is also a complete command engine (``conformance/engines/VENDORS.md`` section 2)::

    python -m conformance.formats.paimon.java.engine read --format paimon --uri URI --out FILE [--version N] ...

Tables in S3 (``s3://``, ``s3a://``) are read through Paimon's own S3 FileIO (``paimon-s3``, a 96 MB
plugin jar fetched on the first S3 read) in a second JVM; the endpoint and credentials from the
table's storage options reach it as Paimon options (``s3.endpoint``, ``s3.access-key``, ...) over the
JVM's stdin, never on a command line.

Writing (``write(table, steps)``) goes through the same JVM: each step becomes ops of the Java side's
``write`` command (a JSON steps file: the schema as Paimon's schema JSON, rows in the read encoding
above, so values cross losslessly both ways), run with Paimon's public write API: ``SchemaManager``
(create, ``SchemaChange``s), ``BatchWriteBuilder`` / ``BatchTableWrite`` / ``BatchTableCommit`` (rows
with their ``RowKind``; dynamic-bucket tables through Paimon's ``HashBucketAssigner``, as Spark's
writer does), full compaction (``compact(partition, bucket, true)``; ``AppendCompactTask`` for
append tables without buckets), ``createTag`` / ``createBranch`` and ``ExpireSnapshots``. What a step
means is ``steps.py``'s:

* Create: ``primary-key`` / ``partition`` options become the schema's keys (as Paimon's DDL does).
* Append: ``files`` = N commits N files (one writer each); refused for primary-key tables, where
  separate writers would number their sequences from the same base. Overwrite replaces the whole
  table (``dynamic-partition-overwrite=false``), keeping its schema.
* Delete/Update evaluate their SQL with DuckDB (pypaimon's helpers) over rows Java itself reads:
  in a primary-key table they write -D / +U records for the matches; in an append table, deletion
  vectors when the table enables them or ``how`` asks (``BaseAppendDeleteFileMaintainer``, merged
  with a file's existing vector, as Spark's DELETE does; an UPDATE adds the new rows in the same
  commit), else the files holding matches are rewritten (removed in the commit that adds their
  other rows). Rows are located by the Java side's ``files`` command: each live file's rows in file
  order, with the positions its deletion vector already deletes.
* CreateRef: Paimon branches from a tag only, so a branch at a snapshot without a tag gets a base tag
  ``lakeconf-branch-base-<branch>``, kept (main's expiry protects a branch's files only through it).
* SetPartitioning, AddConstraint and Raw are refused (``WRITE_GAPS``).

Gaps: VARIANT/BLOB/VECTOR columns (the kit has no Arrow mapping for them).

Besides tables, ``binary_rows`` asks the same JVM for the BinaryRow bytes, hash and buckets Paimon's own
classes produce for rows of values (the Java file's ``binaryrow`` command), which the BinaryRow suites
compare with the reference byte for byte.
"""

from __future__ import annotations

import base64
import decimal
import json
import os
import queue
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
from typing import Any, Callable, Sequence

import pyarrow as pa

from conformance.engines.base import Capabilities, Engine
from conformance.model import Step, TableRef
from conformance.formats.paimon.java import jars

EXIT_UNSUPPORTED = 3
EXIT_INVALID_TABLE = 4
READ_TIMEOUT_S = 600
START_TIMEOUT_S = 120
JAVA_OPTIONS = ("-XX:+UseSerialGC", "-Xss16m", "-Duser.timezone=UTC", "-Dfile.encoding=UTF-8")

GAPS = {
    "variant": "VARIANT, BLOB and VECTOR columns have no Arrow mapping in the kit",
}

WRITE_STEPS = frozenset({
    "Create", "Append", "Overwrite", "Delete", "Update", "SetProperties", "AddColumn", "RenameColumn", "DropColumn",
    "ChangeColumnType", "MoveColumn", "CreateRef", "ExpireSnapshots", "Optimize", "WriteChanges",
})
# Steps paimon-java cannot run at all, and why (the report shows these).
WRITE_GAPS = {
    "SetPartitioning": "a Paimon table's partition keys are fixed at creation",
    "AddConstraint": "Paimon has no CHECK constraints",
    "Raw": "only the reference writer runs raw steps",
}


def _local_path(uri: str) -> str | None:
    from conformance.engines._common import local_path

    return local_path(uri)


def s3_conf(table: TableRef) -> dict[str, str]:
    """Paimon's S3 FileIO options (``s3.*``, which it hands to s3a as ``fs.s3a.*``) for a table's storage options."""
    from conformance.storage.s3_options import config_from_options

    cfg = config_from_options(table.storage_options)
    if cfg is None:
        return {}
    conf = {"s3.region": cfg.region}
    if cfg.endpoint_url:
        conf.update({"s3.endpoint": cfg.endpoint_url, "s3.path.style.access": "true"})
        if cfg.endpoint_url.startswith("http://"):
            conf["s3.connection.ssl.enabled"] = "false"
    if cfg.access_key_id:
        conf["s3.access-key"] = cfg.access_key_id
    if cfg.secret_access_key:
        conf["s3.secret-key"] = cfg.secret_access_key
    return conf


# ----------------------------------------------------------------------------------------------
# The JVM


class JvmError(RuntimeError):
    """The JVM failed, died or timed out (no verdict on the table)."""


class _Server:
    """One ``LakeconfPaimon serve`` JVM: requests in, answers out, one at a time."""

    def __init__(self, classpath: str, java: str = "java") -> None:
        self.classpath, self.java = classpath, java
        self.proc: subprocess.Popen | None = None
        self.answers: queue.Queue = queue.Queue()
        self.log = tempfile.TemporaryFile(prefix="paimon-java-", suffix=".log")
        self.lock = threading.Lock()

    def _start(self) -> None:
        self.proc = subprocess.Popen(
            [self.java, *JAVA_OPTIONS, "-cp", self.classpath, jars.MAIN_CLASS, "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, encoding="utf-8", bufsize=1,
        )
        answers: queue.Queue = queue.Queue()
        self.answers = answers

        def pump(out=self.proc.stdout) -> None:
            for line in out:
                answers.put(line)
            answers.put(None)

        threading.Thread(target=pump, daemon=True, name="paimon-java-stdout").start()
        ready = self._answer(START_TIMEOUT_S)
        if "ready" not in ready:
            raise JvmError(f"the JVM did not start: {ready}")

    def _log_tail(self) -> str:
        self.log.seek(0)
        lines = self.log.read().decode("utf-8", "replace").strip().splitlines()
        return " | ".join(lines[-5:]) if lines else "(nothing on stderr)"

    def _answer(self, timeout: float) -> dict:
        try:
            line = self.answers.get(timeout=timeout)
        except queue.Empty:
            self.stop()
            raise JvmError(f"paimon-java did not answer within {timeout:.0f} s (JVM killed)") from None
        if line is None:
            code = self.proc.wait() if self.proc else None
            self.proc = None
            raise JvmError(f"the paimon-java JVM exited ({code}): {self._log_tail()}")
        return json.loads(line)

    def request(self, args: Sequence[str], timeout: float = READ_TIMEOUT_S) -> dict:
        """``{"exit": N, "message": ...}`` for one request (the JVM started or restarted if needed)."""
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self._start()
            try:
                self.proc.stdin.write(json.dumps(list(args)) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                self.stop()
                raise JvmError(f"the paimon-java JVM is gone: {self._log_tail()}") from None
            return self._answer(timeout)

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=5)
        except Exception:  # noqa: BLE001 - a JVM that does not stop when asked is killed
            proc.kill()
            proc.wait()


# ----------------------------------------------------------------------------------------------
# JSON lines -> Arrow


_INT64 = (-(1 << 63), (1 << 63) - 1)


def _nanos(v: Any) -> int | None:
    """[epoch millis, nano of milli] as epoch nanoseconds; OverflowError naming the instant outside Arrow's range."""
    if v is None:
        return None
    ns = v[0] * 1_000_000 + v[1]
    if not _INT64[0] <= ns <= _INT64[1]:
        import datetime as dt

        try:
            when = (dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=v[0])).isoformat()
        except OverflowError:
            when = "beyond Python's datetime"
        raise OverflowError(f"Java returned {v[0]} ms + {v[1]} ns ({when}), outside Arrow's nanosecond range "
                            "(1677-09-21 .. 2262-04-11)")
    return ns


def _converter(t: Any) -> Callable[[Any], Any]:
    """A function from the Java side's JSON value of type ``t`` to the Python value pyarrow takes for
    ``to_arrow(t)`` (``None`` passes through every converter)."""
    r = t.root
    if r in ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "DATE", "CHAR", "VARCHAR"):
        return lambda v: v
    if r == "FLOAT":
        return lambda v: None if v is None else struct.unpack("<f", struct.pack("<i", v))[0]
    if r == "DOUBLE":
        return lambda v: None if v is None else struct.unpack("<d", struct.pack("<q", v))[0]
    if r in ("BINARY", "VARBINARY"):
        return lambda v: None if v is None else base64.b64decode(v)
    if r == "DECIMAL":
        return lambda v: None if v is None else decimal.Decimal(v)
    if r == "TIME":  # Paimon keeps TIME as milliseconds of the day whatever its precision
        scale = 1 if t.precision <= 3 else 1000 if t.precision <= 6 else 1_000_000
        return lambda v: None if v is None else v * scale
    if r in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        if t.precision <= 3:
            return lambda v: None if v is None else v[0]
        if t.precision <= 6:
            return lambda v: None if v is None else v[0] * 1000 + v[1] // 1000
        return _nanos
    if r == "ARRAY":
        elem = _converter(t.element)
        return lambda v: None if v is None else [elem(x) for x in v]
    if r in ("MAP", "MULTISET"):
        key = _converter(t.key if r == "MAP" else t.element)
        val = _converter(t.value) if r == "MAP" else (lambda v: v)
        return lambda v: None if v is None else [(key(k), val(x)) for k, x in v]
    if r == "ROW":
        subs = [(f.name, _converter(f.type)) for f in t.fields]
        return lambda v: None if v is None else {name: conv(x) for (name, conv), x in zip(subs, v)}
    from reference_impl.errors import Unsupported

    raise Unsupported(f"paimon-java hands no {r} values to the kit", feature=r.lower())


def rows_to_arrow(path: str) -> tuple[pa.Table, dict, list[str]]:
    """The Java side's JSON lines as (an Arrow table of the kit's types, the header, the row kinds)."""
    from reference_impl.paimon.types import parse_type

    with open(path, encoding="utf-8") as fh:
        header = json.loads(fh.readline())
        fields = list(parse_type(header["type"]).fields)
        table, kinds = _lines_to_arrow(fields, fh)
    return table, header, kinds


def _files_to_arrow(path: str) -> list[tuple[str, pa.Table, list[int]]]:
    """The ``files`` answer: per data file (name, rows in file order, positions its deletion vector deletes)."""
    from itertools import islice

    from reference_impl.paimon.types import parse_type

    out = []
    with open(path, encoding="utf-8") as fh:
        fields = list(parse_type(json.loads(fh.readline())["type"]).fields)
        for line in fh:
            meta = json.loads(line)
            rows, _kinds = _lines_to_arrow(fields, islice(fh, meta["rows"]))
            out.append((meta["file"], rows, list(meta["deleted"])))
    return out


def _lines_to_arrow(fields: list, lines) -> tuple[pa.Table, list[str]]:
    """Row lines ``[rowKind, v1, ...]`` of ``fields`` as (an Arrow table of the kit's types, the row kinds)."""
    from reference_impl.paimon.types import arrow_field

    convs = [_converter(f.type) for f in fields]
    columns: list[list[Any]] = [[] for _ in fields]
    kinds: list[str] = []
    for n, line in enumerate(lines, 1):
        values = json.loads(line)
        kinds.append(values[0])
        for f, col, conv, v in zip(fields, columns, convs, values[1:]):
            try:
                col.append(conv(v))
            except (OverflowError, ValueError) as exc:
                raise _conversion_error(f"row {n}, column {f.name!r} ({f.type}): {exc}") from None
    schema = pa.schema([arrow_field(f.name, f.type) for f in fields])
    arrays = []
    for f, col, field in zip(fields, columns, schema):
        try:
            arrays.append(pa.array(col, type=field.type))
        except (OverflowError, pa.ArrowException) as exc:
            raise _conversion_error(f"column {f.name!r} ({f.type}) as {field.type}: {type(exc).__name__}: {exc}") from None
    return pa.Table.from_arrays(arrays, schema=schema), kinds


def _conversion_error(what: str) -> Exception:
    """The rows Java returned do not fit the kit's Arrow type: an error of the cell (no verdict on the table)."""
    from conformance.engines.errors import EngineError

    return EngineError(f"paimon-java's rows do not convert to the kit's Arrow types: {what}")


# ----------------------------------------------------------------------------------------------
# The engine


class PaimonJavaEngine(Engine):
    """paimon-bundle 1.4.2 through one long-lived JVM."""

    name = "paimon-java"

    def __init__(self) -> None:
        self._server: _Server | None = None
        self._s3_server: _Server | None = None  # a second JVM with Paimon's S3 FileIO, started on the first S3 read
        self._unavailable: str | None = None
        self._checked = False
        self.last_kinds: list[str] = []  # the row kinds of the last read (tests look at them)

    def version(self) -> str:
        return f"paimon-bundle {jars.PAIMON_VERSION}"

    def available(self) -> str | None:
        if not self._checked:
            self._unavailable = self._check()
            self._checked = True
        return self._unavailable

    def _check(self) -> str | None:
        for tool in ("java", "javac"):
            if shutil.which(tool) is None:
                return f"no {tool} on PATH: install a JDK 11+ (e.g. apt-get install openjdk-17-jdk-headless)"
        try:
            self._classpath = jars.classpath()
        except Exception as exc:  # noqa: BLE001 - any failure to fetch or build is the reason shown
            return (f"could not fetch or build paimon-bundle {jars.PAIMON_VERSION}: {type(exc).__name__}: {exc} "
                    f"(needs {jars.MAVEN_CENTRAL} once, or LAKECONF_MAVEN_REPO; cache: {jars.engine_dir()})")
        return None

    def capabilities(self) -> Capabilities:
        return Capabilities(read=frozenset({"paimon"}), write=frozenset({"paimon"}), read_features={"paimon": None},
                            write_steps={"paimon": WRITE_STEPS}, unsupported={"paimon": {**GAPS, **WRITE_GAPS}})

    def start(self) -> None:
        self._ensure()

    def close(self) -> None:
        for server in (self._server, self._s3_server):
            if server is not None:
                server.stop()
        self._server = self._s3_server = None

    def _ensure(self, *, s3: bool = False) -> _Server:
        from conformance.engines.errors import EngineError

        reason = self.available()
        if reason:
            raise EngineError(reason)
        if s3:
            if self._s3_server is None:
                try:
                    self._s3_server = _Server(jars.classpath(s3=True))
                except Exception as exc:  # noqa: BLE001 - the download or build failing is the cell's error
                    raise EngineError(f"could not fetch Paimon's S3 FileIO (paimon-s3 {jars.PAIMON_VERSION}): "
                                      f"{type(exc).__name__}: {exc}") from None
            server = self._s3_server
        else:
            if self._server is None:
                self._server = _Server(self._classpath)
            server = self._server
        with server.lock:
            if server.proc is None:
                server._start()
        return server

    def _call(self, command: str, table: TableRef, out: str, at: int | None = None, timestamp: str | None = None,
              ref: str | None = None, extra: Sequence[str] = ()) -> None:
        from conformance.engines.errors import EngineError
        from reference_impl.common.timestamps import to_epoch_ms
        from reference_impl.errors import InvalidTable, Unsupported

        if table.format != "paimon":
            raise Unsupported(f"paimon-java reads paimon tables only, not {table.format}")
        from conformance.engines._common import is_s3

        path = _local_path(table.uri)
        s3 = is_s3(table)
        if path is None and not s3:
            raise Unsupported(f"paimon-java reads local and S3 tables, not {table.uri}")
        args = [command, "--uri", os.path.abspath(path) if path is not None else table.uri, "--out", out]
        for key, value in s3_conf(table).items() if s3 else ():
            args += ["--conf", f"{key}={value}"]  # over the JVM's stdin, never a command line
        if at is not None:
            args += ["--version", str(at)]
        if timestamp is not None:
            args += ["--timestamp", str(to_epoch_ms(timestamp))]
        if ref is not None:
            args += ["--ref", ref]
        args += list(extra)
        try:
            answer = self._ensure(s3=s3).request(args)
        except JvmError as exc:
            raise EngineError(str(exc)) from None
        code, message = answer.get("exit"), answer.get("message") or ""
        if code == 0:
            return
        if code == EXIT_UNSUPPORTED:
            raise Unsupported(message, path=table.uri)
        if code == EXIT_INVALID_TABLE and command != "write":  # a write's own table is no table under test
            raise InvalidTable(message, path=table.uri)
        raise EngineError(f"paimon-java exited {code}: {message}")

    def read(self, table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None,
             columns: Sequence[str] | None = None) -> pa.Table:
        from reference_impl.errors import InvalidTable

        with tempfile.TemporaryDirectory(prefix="paimon-java-") as tmp:
            out = os.path.join(tmp, "rows.jsonl")
            self._call("read", table, out, at, timestamp, ref)
            result, _header, self.last_kinds = rows_to_arrow(out)
        if columns:
            unknown = [c for c in columns if c not in result.column_names]
            if unknown:
                raise InvalidTable(f"unknown column(s) {', '.join(map(repr, unknown))}")
            wanted = set(columns)
            result = result.select([c for c in result.column_names if c in wanted])  # schema order, as the reference
        return result

    def describe(self, table: TableRef, *, at: int | None = None, timestamp: str | None = None,
                 ref: str | None = None) -> dict | None:
        with tempfile.TemporaryDirectory(prefix="paimon-java-") as tmp:
            out = os.path.join(tmp, "describe.json")
            self._call("describe", table, out, at, timestamp, ref)
            with open(out, encoding="utf-8") as fh:
                facts = json.load(fh)
        if not facts.get("primary_keys"):
            facts["merge_engine"] = None  # facts.py: the merge engine of an append table is None
        return facts

    def reproduction(self, table: TableRef, at: int | None = None) -> str | None:
        return _REPRODUCTION.replace("@AT@", repr(at))

    # -- write ---------------------------------------------------------------------------------

    def write(self, table: TableRef, steps: Sequence[Step]) -> None:
        from reference_impl.errors import Unsupported

        for step in steps:
            kind = type(step).__name__
            if kind not in WRITE_STEPS:
                raise Unsupported(f"paimon-java cannot run a {kind} step: {WRITE_GAPS.get(kind, 'no such API')}",
                                  feature=kind)
        writer = _Writer(self, table)
        for step in steps:
            getattr(writer, "_" + type(step).__name__)(step)

    def run_ops(self, table: TableRef, ops: list[dict]) -> int | None:
        """Run write ops (the Java file's ``write`` section) in one request; the latest snapshot id after them."""
        with tempfile.TemporaryDirectory(prefix="paimon-java-") as tmp:
            steps, out = os.path.join(tmp, "steps.json"), os.path.join(tmp, "written.json")
            with open(steps, "w", encoding="utf-8") as fh:
                json.dump({"steps": ops}, fh)
            self._call("write", table, out, extra=["--steps", steps])
            with open(out, encoding="utf-8") as fh:
                return json.load(fh)["snapshot"]

    def data_files(self, table: TableRef) -> list[tuple[str, pa.Table, list[int]]]:
        """An append table's live data files as Java reads them: (file name, its rows in file order with
        no deletion vector applied, the positions its deletion vector deletes)."""
        with tempfile.TemporaryDirectory(prefix="paimon-java-") as tmp:
            out = os.path.join(tmp, "files.jsonl")
            self._call("files", table, out)
            return _files_to_arrow(out)

    def binary_rows(self, types: Sequence[Any], rows: Sequence[Sequence[Any]],
                    buckets: Sequence[int] = ()) -> list[dict]:
        """What Paimon's own classes write for rows of values (the Java file's ``binaryrow`` section), in one
        request: ``types`` are Paimon schema JSON types, each row ``[rowKind, v1, ...]`` in the read encoding.
        Per row ``{"bytes", "projected", "serialized": bytes (projected None where Java's code generator refuses
        the row type), "hash": int, "buckets": {function: [bucket per n] | error message | None}}``."""
        from conformance.engines.errors import EngineError
        from reference_impl.errors import Unsupported

        # inline on the JVM's stdin (no files): a property example costs one round trip
        request = json.dumps({"fields": list(types), "rows": [list(r) for r in rows], "buckets": list(buckets)})
        try:
            answer = self._ensure().request(["binaryrow", "--request", request])
        except JvmError as exc:
            raise EngineError(str(exc)) from None
        code, message = answer.get("exit"), answer.get("message") or ""
        if code == EXIT_UNSUPPORTED:
            raise Unsupported(message)
        if code != 0:
            raise EngineError(f"paimon-java binaryrow exited {code}: {message}")
        out = json.loads(message)["rows"]
        for row in out:
            for key in ("bytes", "projected", "serialized"):
                row[key] = None if row[key] is None else bytes.fromhex(row[key])
        return out


# A script for a Paimon maintainer: plain Java against paimon-bundle's public API (the jars on
# PAIMON_CLASSPATH: paimon-bundle 1.4.2, hadoop-client-api/-runtime 3.3.4, commons-logging, slf4j),
# each value as Java's own ``String.valueOf`` of what the getter returns (a table of strings).
_REPRODUCTION = '''def read():
    import json, os, subprocess, tempfile
    import pyarrow as pa

    at = @AT@
    java = r"""
import java.util.*;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.table.*;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.RowType;
public class Repro {
  public static void main(String[] a) throws Exception {
    FileStoreTable t = FileStoreTableFactory.create(LocalFileIO.create(), new Path(a[0]));
    if (a.length > 1) t = t.copy(Collections.singletonMap("scan.snapshot-id", a[1]));
    RowType rt = t.rowType();
    System.out.println(String.join("\\t", rt.getFieldNames()));
    ReadBuilder rb = t.newReadBuilder();
    rb.newRead().createReader(rb.newScan().plan().splits()).forEachRemaining(row -> {
      List<String> out = new ArrayList<>();
      for (int i = 0; i < rt.getFieldCount(); i++)
        out.add(String.valueOf(InternalRow.createFieldGetter(rt.getTypeAt(i), i).getFieldOrNull(row)));
      System.out.println(String.join("\\t", out));
    });
  }
}
"""
    cp = os.environ["PAIMON_CLASSPATH"]
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "Repro.java"), "w") as fh:
            fh.write(java)
        subprocess.run(["javac", "-cp", cp, "-d", tmp, os.path.join(tmp, "Repro.java")], check=True)
        args = [TABLE] + ([str(at)] if at else [])
        out = subprocess.run(["java", "-cp", tmp + os.pathsep + cp, "Repro", *args], check=True,
                             capture_output=True, text=True).stdout.splitlines()
    names = out[0].split("\\t")
    rows = [line.split("\\t") for line in out[1:]]
    return pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})
'''


# ----------------------------------------------------------------------------------------------
# Writing: the kit's steps as the Java side's write ops


def _float_bits(fmt_in: str, fmt_out: str) -> Callable[[Any], Any]:
    return lambda v: None if v is None else struct.unpack(fmt_out, struct.pack(fmt_in, v))[0]


def encode_array(arr: pa.Array | pa.ChunkedArray) -> list[Any]:
    """The values of an Arrow array in the read encoding (the Java file's header), by the Arrow type:
    the Java side decodes them by the table's Paimon type, so the two only need to agree on the encoding."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_timestamp(t):  # [epoch millis, nano of millisecond], floored as Paimon's Timestamp is
        per_ms = {"s": None, "ms": 1, "us": 1000, "ns": 1_000_000}[t.unit]
        ints = arr.cast(pa.int64()).to_pylist()
        if per_ms is None:
            return [None if v is None else [v * 1000, 0] for v in ints]
        return [None if v is None else [v // per_ms, (v % per_ms) * (1_000_000 // per_ms)] for v in ints]
    if pa.types.is_date32(t):
        return arr.cast(pa.int32()).to_pylist()
    if pa.types.is_time(t):  # Paimon keeps TIME as milliseconds of the day
        ints = arr.cast(pa.int64() if pa.types.is_time64(t) else pa.int32()).to_pylist()
        scale = {"s": -1000, "ms": 1, "us": 1000, "ns": 1_000_000}[t.unit]
        return [None if v is None else (v * -scale if scale < 0 else v // scale) for v in ints]
    if pa.types.is_float32(t):
        return list(map(_float_bits("<f", "<i"), arr.to_pylist()))
    if pa.types.is_float64(t):
        return list(map(_float_bits("<d", "<q"), arr.to_pylist()))
    if pa.types.is_decimal(t):
        return [None if v is None else format(v, "f") for v in arr.to_pylist()]
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return [None if v is None else base64.b64encode(v).decode("ascii") for v in arr.to_pylist()]
    if pa.types.is_map(t) or pa.types.is_list(t) or pa.types.is_large_list(t):
        # offsets index the whole child array, so a sliced array decodes right too
        if pa.types.is_map(t):
            child = [list(kv) for kv in zip(encode_array(arr.keys), encode_array(arr.items))]
        else:
            child = encode_array(arr.values)
        offsets, valid = arr.offsets.to_pylist(), arr.is_valid().to_pylist()
        return [child[offsets[i]:offsets[i + 1]] if valid[i] else None for i in range(len(arr))]
    if pa.types.is_struct(t):
        children = [encode_array(c) for c in arr.flatten()]
        valid = arr.is_valid().to_pylist()
        return [[c[i] for c in children] if valid[i] else None for i in range(len(arr))]
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr.to_pylist()
    from reference_impl.errors import Unsupported

    raise Unsupported(f"paimon-java writes no Arrow {t} values", feature=f"arrow-type:{t}")


def encode_rows(rows: pa.Table, kinds: Sequence[str] | None = None) -> tuple[list[str], list[list[Any]]]:
    """(column names, rows ``[rowKind, v1, ...]``) of an Arrow table (every row ``+I`` unless ``kinds``)."""
    columns = [encode_array(c) for c in rows.columns]
    kinds = list(kinds) if kinds is not None else ["+I"] * rows.num_rows
    return rows.column_names, [[kind, *values] for kind, *values in zip(kinds, *columns)]


def _paimon_type_json(t: pa.DataType, nullable: bool, ids: list[int]) -> Any:
    """Paimon's schema JSON of an Arrow type. Nested ROW field ids are placeholders from ``ids``: Paimon's
    ``Schema`` builder and ``SchemaManager`` (AddColumn) reassign them above the table's highest id."""
    from reference_impl.paimon.types import to_json
    from reference_impl.paimon.writer import paimon_type

    return to_json(paimon_type(t, nullable, ids))


_FILE, _POS = "_lakeconf_file", "_lakeconf_pos"  # columns the append-table deletes carry along


class _Writer:
    """Turns each step into Java write ops (``run_ops``); deletes and updates read the table first
    (through Java itself) and evaluate the SQL with DuckDB, as the pypaimon writer does."""

    def __init__(self, engine: "PaimonJavaEngine", table: TableRef) -> None:
        self.engine, self.table = engine, table

    def _run(self, *ops: dict) -> None:
        self.engine.run_ops(self.table, list(ops))

    def _facts(self) -> dict:
        return self.engine.describe(self.table)

    def _write_op(self, rows: pa.Table, kinds: Sequence[str] | None = None, **extra: Any) -> dict:
        columns, encoded = encode_rows(rows, kinds)
        return {"op": "write", "columns": columns, "chunks": [encoded], **extra}

    # -- create and schema ---------------------------------------------------------------------

    def _Create(self, step) -> None:
        from conformance.formats.paimon.steps import table_keys

        options, primary, partition = table_keys(step)
        ids = [len(step.schema) - 1]
        fields = [{"name": f.name, "type": _paimon_type_json(f.type, f.nullable, ids)} for f in step.schema]
        self._run({"op": "create", "fields": fields, "partition_keys": partition, "primary_keys": primary,
                   "options": options})

    def _schema(self, *changes: dict) -> None:
        self._run({"op": "schema", "changes": list(changes)})

    def _SetProperties(self, step) -> None:
        self._schema(*[{"set_option": [k, str(v)]} for k, v in step.properties.items()])

    def _AddColumn(self, step) -> None:
        added = _paimon_type_json(step.field.type, True, [10_000])
        self._schema({"add_column": {"name": step.field.name, "type": added}})

    def _RenameColumn(self, step) -> None:
        self._schema({"rename_column": [step.old, step.new]})

    def _DropColumn(self, step) -> None:
        self._schema({"drop_column": step.name})

    def _ChangeColumnType(self, step) -> None:
        self._schema({"update_column_type": {"name": step.name, "type": _paimon_type_json(step.type, True, [10_000])}})

    def _MoveColumn(self, step) -> None:
        self._schema({"move": {"name": step.name, "after": step.after}})

    # -- data ----------------------------------------------------------------------------------

    def _Append(self, step) -> None:
        from reference_impl.errors import Unsupported

        columns, encoded = encode_rows(step.rows)
        if step.files > 1 and self._facts()["primary_keys"]:
            raise Unsupported(
                "paimon-java cannot split one commit of a primary-key table over several files: its batch writer "
                "rolls files by size only, and separate writers would number their sequences from the same base",
                feature="files")
        per = max(1, -(-len(encoded) // max(step.files, 1)))
        chunks = [encoded[i:i + per] for i in range(0, len(encoded), per)] or [encoded]
        self._run({"op": "write", "columns": columns, "chunks": chunks, "branch": step.branch})

    def _Overwrite(self, step) -> None:
        from reference_impl.errors import Unsupported

        have = self.engine.read(self.table, at=0).column_names  # the latest schema, no rows
        if step.rows.column_names != have:
            raise Unsupported("Paimon's INSERT OVERWRITE keeps the table schema; it cannot replace it "
                              f"({have} -> {step.rows.column_names})", feature="overwrite-schema")
        self._run(self._write_op(step.rows, overwrite=True))

    def _WriteChanges(self, step) -> None:
        self._run(self._write_op(step.rows, step.kinds))

    def _Delete(self, step) -> None:
        self._change(step.where, None, step.how)

    def _Update(self, step) -> None:
        self._change(step.where, {k: str(v) for k, v in step.set.items()}, None)

    def _change(self, where: str, assignments: dict[str, str] | None, how: str | None) -> None:
        """A DELETE (``assignments`` None) or an UPDATE: -D / +U records in a primary-key table; in an
        append table deletion vectors where the table enables them (or ``how`` asks), else a rewrite
        of the files holding matches."""
        from conformance.formats.paimon.engines.pypaimon import _matching, _updated
        from reference_impl.errors import Unsupported

        facts = self._facts()
        if facts["primary_keys"]:
            if how is not None:
                raise Unsupported(f"a primary-key table deletes by -D records, not by {how}", feature=how)
            matched = _matching(self.engine.read(self.table), where)
            if not matched.num_rows:
                return  # nothing matches: no commit
            if assignments is None:
                self._run(self._write_op(matched, ["-D"] * matched.num_rows))
                return
            fixed = (set(facts["primary_keys"]) | set(facts["partition_keys"])) & set(assignments)
            if fixed:
                raise Unsupported(f"updating key or partition columns {sorted(fixed)} would move rows to other keys",
                                  feature="update-key")
            self._run(self._write_op(_updated(matched, assignments), ["+U"] * matched.num_rows))
            return
        if how not in (None, "copy-on-write", "deletion-vectors"):
            raise Unsupported(f"Paimon append tables delete by rewriting files or by deletion vectors, not {how}",
                              feature=how)
        dv_table = str(facts["options"].get("deletion-vectors.enabled", "")).lower() == "true"
        use_dv = how == "deletion-vectors" or (how is None and dv_table)
        live = []
        for name, rows, deleted in self.engine.data_files(self.table):
            gone = set(deleted)
            keep = [i for i in range(rows.num_rows) if i not in gone]
            rows = rows.append_column(_FILE, pa.array([name] * rows.num_rows, pa.string()))
            rows = rows.append_column(_POS, pa.array(range(rows.num_rows), pa.int64()))
            live.append(rows.take(pa.array(keep, pa.int64())))
        if not live:
            return
        current = pa.concat_tables(live)
        matched = _matching(current, where)
        if not matched.num_rows:
            return
        names = [c for c in current.column_names if c not in (_FILE, _POS)]
        new_rows = _updated(matched.select(names), assignments) if assignments is not None else None
        if use_dv:
            deletes: dict[str, list[int]] = {}
            for name, pos in zip(matched.column(_FILE).to_pylist(), matched.column(_POS).to_pylist()):
                deletes.setdefault(name, []).append(pos)
            op = self._write_op(new_rows) if new_rows is not None else {"op": "write", "columns": [], "chunks": []}
            self._run({**op, "dv_deletes": deletes})
            return
        # copy-on-write: the touched files go, their other rows (and the updated ones) come back in new files
        touched = sorted(set(matched.column(_FILE).to_pylist()))
        hit = set(zip(matched.column(_FILE).to_pylist(), matched.column(_POS).to_pylist()))
        files, positions = current.column(_FILE).to_pylist(), current.column(_POS).to_pylist()
        stay = [i for i, (f, p) in enumerate(zip(files, positions)) if f in touched and (f, p) not in hit]
        rest = current.take(pa.array(stay, pa.int64())).select(names)
        if new_rows is not None:
            rest = pa.concat_tables([rest, new_rows.cast(rest.schema)])
        self._run(self._write_op(rest, drop_files=touched))

    # -- maintenance and refs ------------------------------------------------------------------

    def _Optimize(self, step) -> None:
        self._run({"op": "compact"})

    def _ExpireSnapshots(self, step) -> None:
        self._run({"op": "expire", "retain_last": step.retain_last})

    def _CreateRef(self, step) -> None:
        self._run({"op": step.kind, "name": step.name, "snapshot": step.version})


# ----------------------------------------------------------------------------------------------
# The command contract


def main(argv: list[str] | None = None) -> int:
    """``read`` / ``version`` / ``capabilities`` as VENDORS.md section 2 says (rows written as Parquet)."""
    import argparse

    argv = list(sys.argv[1:] if argv is None else argv)
    engine = PaimonJavaEngine()
    if argv[:1] == ["version"]:
        print(engine.version())
        return 0
    if argv[:1] == ["capabilities"]:
        print(json.dumps({"read": ["paimon"], "unsupported": {"paimon": GAPS}}))
        return 0
    parser = argparse.ArgumentParser(prog="paimon-java read")
    parser.add_argument("command", choices=["read"])
    parser.add_argument("--format", required=True)
    parser.add_argument("--uri", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--version", type=int)
    parser.add_argument("--timestamp")
    parser.add_argument("--ref")
    args = parser.parse_args(argv)
    import pyarrow.parquet as pq

    try:
        rows = engine.read(TableRef(format=args.format, uri=args.uri), at=args.version, timestamp=args.timestamp,
                           ref=args.ref)
    except Exception as exc:  # noqa: BLE001 - the contract: a reason on stderr and an exit code
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return {"unsupported": EXIT_UNSUPPORTED, "invalid_table": EXIT_INVALID_TABLE}.get(getattr(exc, "kind", None), 1)
    finally:
        engine.close()
    pq.write_table(rows, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
