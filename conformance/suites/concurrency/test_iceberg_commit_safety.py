"""Commit safety of the reference Iceberg writer under concurrency and crashes, on local disk and MinIO.

* Several writer processes append one row per commit to one v3 table at the same time, through the
  file-system layout (put-if-absent of ``v<N+1>.metadata.json``) and through the SQL catalog
  (``UPDATE ... WHERE metadata_location = <base>`` in a shared SQLite file). Afterwards: the
  metadata versions are exactly 1..N+1 (file-system) or 0..N (catalog, no loser's file left
  behind), every file parses (nothing torn), the main history is one unbroken chain of sequence
  numbers 1..N, each append landed in exactly the snapshot whose sequence number its writer was
  told, row-id ranges never overlap, and the reference reader, PyIceberg and the validator agree
  on the N rows: no lost, duplicated or torn commits (COMMIT-001/002/003, SEQ-002/003, LINEAGE-010).
* A writer SIGKILLed after writing its data file and manifest but before its commit leaves a
  table that readers see at the previous version; the next writer commits normally.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap
import time

import pyarrow as pa
import pytest

from conformance.storage import Store, s3_options
from reference_impl.iceberg import catalog as C
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import snapshots as S
from reference_impl.iceberg import types as T
from reference_impl.iceberg import values as V
from reference_impl.storage import S3Config, open_storage

WRITERS = 4
COMMITS = 8
SCHEMA = pa.schema([pa.field("writer", pa.int32()), pa.field("seq", pa.int32())])

pytestmark = [pytest.mark.rule("ICEBERG-COMMIT-001", "ICEBERG-COMMIT-002", "ICEBERG-COMMIT-003", "ICEBERG-SEQ-002",
                               "ICEBERG-SEQ-003", "ICEBERG-LINEAGE-010", "ICEBERG-LINEAGE-011")]


def _row(writer: int, seq: int) -> pa.Table:
    return pa.table({"writer": pa.array([writer], pa.int32()), "seq": pa.array([seq], pa.int32())}, schema=SCHEMA)


def _catalog(kind: str, db: str | None):
    return C.SqlCatalog(db, table="concurrent") if kind == "sql" else None


def _append_worker(uri: str, s3: S3Config | None, kind: str, db: str | None, writer_id: int, start, out) -> None:
    """One writer process: wait for the start signal, then COMMITS appends; report (seq, sequence number, attempts)."""
    from reference_impl.iceberg import writer as w

    try:
        storage = open_storage(uri, s3=s3)
        cat = _catalog(kind, db)
        start.wait()
        got = []
        for seq in range(COMMITS):
            r = w.append(storage, _row(writer_id, seq), catalog=cat)
            got.append((seq, r.sequence_number, r.attempts))
        out.put((writer_id, got, None))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the test
        out.put((writer_id, [], f"{type(exc).__name__}: {exc}"))


def _pyiceberg_rows(store: Store, metadata_uri: str) -> pa.Table:
    static = pytest.importorskip("pyiceberg.table").StaticTable
    props = {}
    if store.s3_config is not None:
        c = store.s3_config
        props = {"s3.endpoint": c.endpoint_url, "s3.access-key-id": c.access_key_id, "s3.secret-access-key": c.secret_access_key,
                 "s3.region": c.region}
    return static.from_metadata(metadata_uri, properties=props).scan().to_arrow()


def _pairs(rows: pa.Table) -> list[tuple[int, int]]:
    return sorted(zip(rows.column("writer").to_pylist(), rows.column("seq").to_pylist()))


def _landed(storage, md: M.TableMetadata, snap: M.Snapshot) -> list[tuple[int, int]]:
    """The (writer, seq) rows of the data files a snapshot added, from their manifest bounds."""
    out = []
    for mf in S.snapshot_manifests(storage, snap):
        if mf.added_snapshot_id != snap.snapshot_id:
            continue
        for e in MF.read_manifest(storage.read(storage.resolve(mf.manifest_path)), manifest_file=mf).entries:
            lo = e.data_file.lower_bounds
            out.append((V.from_bytes(lo[1], T.INT), V.from_bytes(lo[2], T.INT)))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["file-system", "sql"])
def test_concurrent_appenders_lose_nothing(store: Store, kind, tmp_path):
    from reference_impl.iceberg import writer as w
    from reference_impl.iceberg.table import read_table
    from reference_impl.iceberg.validate import validate_table

    table = store.table_ref("iceberg", f"concurrent-{kind}")
    storage = store.storage(table.uri)
    db = str(tmp_path / "catalog.db") if kind == "sql" else None
    w.create_table(storage, SCHEMA, format_version=3, catalog=_catalog(kind, db))

    ctx = mp.get_context("spawn")  # fresh interpreters: no inherited locks, real parallel writers
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_append_worker, args=(table.uri, store.s3_config, kind, db, i, start, out)) for i in range(WRITERS)]
    for p in procs:
        p.start()
    time.sleep(0.5)  # let the interpreters import before the race starts
    began = time.monotonic()
    start.set()
    reports = [out.get(timeout=600) for _ in procs]
    elapsed = time.monotonic() - began
    for p in procs:
        p.join(timeout=60)
    errors = [f"writer {i}: {err}" for i, _, err in reports if err]
    assert not errors, errors

    total = WRITERS * COMMITS
    told = {}  # sequence number -> (writer, seq) as each writer's append() reported it
    retries = 0
    for writer_id, got, _ in reports:
        for seq, number, attempts in got:
            assert number not in told, f"sequence number {number} reported to two appends: {told[number]} and {(writer_id, seq)}"
            told[number] = (writer_id, seq)
            retries += attempts - 1
    assert sorted(told) == list(range(1, total + 1)), "sequence numbers handed out are not exactly 1..N"

    cat = _catalog(kind, db) or C.FileSystemCatalog()
    current = cat.load(storage)
    names = sorted(f.path.rsplit("/", 1)[-1] for f in storage.list("metadata") if f.path.endswith(".metadata.json"))
    if kind == "sql":
        assert sorted(C.catalog_version_of(n) for n in names) == list(range(total + 1)), "a lost swap left its metadata file behind"
    else:
        assert names == sorted(f"v{v}.metadata.json" for v in range(1, total + 2))
        assert storage.read(C.VERSION_HINT) == str(total + 1).encode()
    for n in names:
        M.parse_metadata(storage.read(f"metadata/{n}"))  # every metadata file parses: none is torn

    md = current.metadata
    chain = list(S.ancestors(md, md.current_snapshot_id))
    assert [s.sequence_number for s in chain] == list(range(total, 0, -1)), "the main history is not one chain 1..N"
    assert md.last_sequence_number == total and md.next_row_id == total
    for snap in chain:
        assert _landed(storage, md, snap) == [told[snap.sequence_number]], f"snapshot {snap.sequence_number} holds another append"
    ranges = sorted((s.first_row_id, s.added_rows) for s in md.snapshots)
    assert all(a + n <= b for (a, n), (b, _) in zip(ranges, ranges[1:])), "row-id ranges overlap"

    expected = sorted((wid, seq) for wid in range(WRITERS) for seq in range(COMMITS))
    assert _pairs(read_table(storage)) == expected  # listing finds the catalog's file too: no loser's file is left
    assert _pairs(_pyiceberg_rows(store, current.uri)) == expected
    assert validate_table(storage, metadata_location=current.uri) == []
    print(f"\n{store.name}/{kind}: {total} concurrent commits by {WRITERS} writers in {elapsed:.1f} s, {retries} retries")


_KILLED_WRITER = textwrap.dedent(
    """
    import json, os, sys, time
    import pyarrow as pa
    from conformance.storage.s3_options import config_from_options
    from reference_impl.iceberg import catalog as C
    from reference_impl.iceberg import writer as W
    from reference_impl.storage import open_storage

    class Stalled(C.FileSystemCatalog):
        def commit(self, storage, base, md):
            written = sorted(f.path for f in storage.walk("data")) + sorted(f.path for f in storage.list("metadata") if f.path.endswith(".avro"))
            print(json.dumps(written), flush=True)
            time.sleep(600)  # the parent SIGKILLs us here: data file, manifest and manifest list written, no commit

    uri = sys.argv[1]
    storage = open_storage(uri, s3=config_from_options(dict(os.environ)) if uri.startswith("s3://") else None)
    rows = pa.table({"writer": pa.array([99, 99], pa.int32()), "seq": pa.array([0, 1], pa.int32())})
    W.append(storage, rows, files=2, catalog=Stalled())
    """
)


@pytest.mark.rule("ICEBERG-GEN-009", "ICEBERG-COMMIT-008")
def test_writer_killed_before_commit_leaves_previous_version(store: Store):
    from reference_impl.iceberg import writer as w
    from reference_impl.iceberg.table import read_table

    table = store.table_ref("iceberg", "killed-writer")
    storage = store.storage(table.uri)
    w.create_table(storage, SCHEMA)
    w.append(storage, _row(1, 0))
    w.append(storage, _row(1, 1))  # metadata v3, sequence number 2

    env = dict(os.environ)
    if store.s3_config is not None:
        env.update(s3_options.object_store_options(store.s3_config))  # credentials via the environment only
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, table.uri], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line, f"the writer died before staging its files: {proc.stderr.read()[-2000:]}"
        staged = json.loads(line)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert all(storage.exists(p) for p in staged) and len([p for p in staged if p.startswith("data/")]) == 4

    names = sorted(f.path for f in storage.list("metadata") if f.path.endswith(".metadata.json"))
    assert names == [f"metadata/v{v}.metadata.json" for v in (1, 2, 3)], "a commit appeared for the killed writer"
    previous = [(1, 0), (1, 1)]
    assert _pairs(read_table(storage)) == previous
    assert _pairs(_pyiceberg_rows(store, C.FileSystemCatalog().load(storage).uri)) == previous

    # The orphaned files block nothing: the next writer commits version 4, sequence number 3.
    r = w.append(storage, _row(2, 0))
    assert (r.metadata_version, r.sequence_number) == (4, 3)
    assert _pairs(read_table(storage)) == previous + [(2, 0)]
