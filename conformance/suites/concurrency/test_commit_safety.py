"""Commit safety of the reference writer under concurrency and crashes, on local disk and MinIO.

* 8 writer processes append 50 rows each, one commit per row, to one table at the same time
  (``reference_impl.delta.writer.append``: put-if-absent, re-read the winners, retry). Afterwards
  the log holds exactly versions 0..400, every commit parses, each append landed in exactly one
  version (the one its writer was told), and the reference reader and deltalake both read the
  400 rows. Writer 0 also checkpoints now and then, as a table service would (a checkpoint adds
  no version; it keeps snapshot loads short on S3, where each commit read is a request).
* A writer SIGKILLed after writing its data files but before its commit leaves a table that the
  reference, deltalake and DuckDB read as the previous version; the next writer commits normally.
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

from conformance.engines.registry import load_engines
from conformance.storage import Store, s3_options
from reference_impl.delta.actions import parse_commit
from reference_impl.delta.log import commit_path
from reference_impl.storage import S3Config, open_storage

WRITERS = 8
COMMITS = 50
CHECKPOINT_EVERY = 5  # writer 0 checkpoints after every 5th of its own commits
SCHEMA = pa.schema([pa.field("writer", pa.int32()), pa.field("seq", pa.int32())])

pytestmark = [pytest.mark.rule("DELTA-LOG-010", "DELTA-LOG-011", "DELTA-LOG-001")]


def _row(writer: int, seq: int) -> pa.Table:
    return pa.table({"writer": pa.array([writer], pa.int32()), "seq": pa.array([seq], pa.int32())}, schema=SCHEMA)


def _append_worker(uri: str, s3: S3Config | None, writer_id: int, start, out) -> None:
    """One writer process: wait for the start signal, then 50 appends; report (seq, version) pairs."""
    from reference_impl.delta import writer as w

    try:
        storage = open_storage(uri, s3=s3)
        start.wait()
        got = []
        for seq in range(COMMITS):
            got.append((seq, w.append(storage, _row(writer_id, seq))))
            if writer_id == 0 and (seq + 1) % CHECKPOINT_EVERY == 0:
                w.checkpoint(storage)
        out.put((writer_id, got, None))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the test
        out.put((writer_id, [], f"{type(exc).__name__}: {exc}"))


def _read_with(engine_name: str, table) -> pa.Table:
    (engine,) = load_engines([engine_name])
    reason = engine.available()
    if reason:
        pytest.skip(f"{engine_name} unavailable: {reason}")
    try:
        return engine.read(table)
    finally:
        engine.close()


def _pairs(rows: pa.Table) -> list[tuple[int, int]]:
    return sorted(zip(rows.column("writer").to_pylist(), rows.column("seq").to_pylist()))


@pytest.mark.slow
def test_eight_concurrent_writers_lose_nothing(store: Store):
    from reference_impl.delta import writer as w

    table = store.table_ref("delta", "concurrent-appends")
    storage = store.storage(table.uri)
    w.create_table(storage, SCHEMA)

    ctx = mp.get_context("spawn")  # fresh interpreters: no inherited locks, real parallel writers
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_append_worker, args=(table.uri, store.s3_config, i, start, out)) for i in range(WRITERS)]
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

    told = {}  # version -> (writer, seq) as each writer's append() reported it
    for writer_id, got, _ in reports:
        for seq, version in got:
            assert version not in told, f"version {version} reported to two appends: {told[version]} and {(writer_id, seq)}"
            told[version] = (writer_id, seq)
    total = WRITERS * COMMITS
    assert sorted(told) == list(range(1, total + 1)), "versions handed out are not exactly 1..400"

    commits = sorted(f.path for f in storage.list("_delta_log") if f.path.endswith(".json"))
    assert commits == [commit_path(v) for v in range(total + 1)], "the log is not exactly versions 0..400"
    for version in range(1, total + 1):
        actions = parse_commit(storage.read(commit_path(version)), version=version)  # parses: not torn
        adds = [a for a in actions if type(a).__name__ == "AddFile"]
        assert len(adds) == 1, f"version {version} has {len(adds)} add actions"
        stats = json.loads(adds[0].stats)
        landed = (stats["minValues"]["writer"], stats["minValues"]["seq"])
        assert landed == told[version], f"version {version} holds {landed}, but {told[version]} was told it"

    expected = sorted((wid, seq) for wid in range(WRITERS) for seq in range(COMMITS))
    assert _pairs(_read_with("reference", table)) == expected
    assert _pairs(_read_with("deltalake", table)) == expected
    print(f"\n{store.name}: {total} concurrent commits by {WRITERS} writers in {elapsed:.1f} s")


_KILLED_WRITER = textwrap.dedent(
    """
    import json, os, sys, time
    import pyarrow as pa
    from conformance.storage.s3_options import config_from_options
    from reference_impl.delta.writer import Transaction
    from reference_impl.storage import open_storage

    uri = sys.argv[1]
    storage = open_storage(uri, s3=config_from_options(dict(os.environ)) if uri.startswith("s3://") else None)
    t = Transaction(storage, operation="WRITE", parameters={"mode": "Append"})
    rows = pa.table({"writer": pa.array([99, 99], pa.int32()), "seq": pa.array([0, 1], pa.int32())})
    adds = t.write_rows(rows, files=2)
    print(json.dumps([a.path for a in adds]), flush=True)
    time.sleep(600)  # the parent SIGKILLs us here: data files written, no commit
    """
)


@pytest.mark.rule("DELTA-LOG-006")
def test_writer_killed_before_commit_leaves_previous_version(store: Store):
    from reference_impl.delta import writer as w

    table = store.table_ref("delta", "killed-writer")
    storage = store.storage(table.uri)
    w.create_table(storage, SCHEMA)
    w.append(storage, _row(1, 0))
    w.append(storage, _row(1, 1))  # version 2

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

    assert len(staged) == 2 and all(storage.exists(p) for p in staged), "the data files were not written"
    commits = [f.path for f in storage.list("_delta_log") if f.path.endswith(".json")]
    assert commits == [commit_path(v) for v in range(3)], "a commit appeared for the killed writer"

    previous = [(1, 0), (1, 1)]
    for engine in ("reference", "deltalake", "duckdb"):
        assert _pairs(_read_with(engine, table)) == previous, f"{engine} does not read version 2"

    # The orphaned files block nothing: the next writer commits version 3 and they stay unreferenced.
    assert w.append(storage, _row(2, 0)) == 3
    assert _pairs(_read_with("reference", table)) == previous + [(2, 0)]
    assert _pairs(_read_with("deltalake", table)) == previous + [(2, 0)]
