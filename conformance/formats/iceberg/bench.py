"""Scan-planning benchmark: the reference ``plan_files`` against PyIceberg's on one big Iceberg table.

``build_table`` writes a format-v2 table whose current snapshot lists ``manifests`` data manifests
of ``entries`` data files each (identity-partitioned over 16 values, with full column metrics, as
an engine writes them), plus delete manifests holding one position delete file for every
``delete_every``-th data file (``referenced_data_file`` set and ``file_path`` bounds equal to the
target, the way Java writes a single-file position delete). Manifests keep ADDED entries with
inherited sequence numbers, as they stay after a run of appends: each manifest was added by its
own earlier snapshot (sequence number 1..N). Data files do not exist: planning reads metadata only.

Each engine then loads the metadata and plans the scan of the current snapshot, ``repeat`` times,
each time in a fresh subprocess (so one engine's caches and allocator never help or hurt the
other, and the peak resident set size is that process's own: VmHWM, or ``ru_maxrss`` where /proc
is missing). Both sides produce the same thing: the data files to read and, per data file, the
delete files that apply; the digests of those plans must agree. The summary gives the median
wall and CPU times, the ratio reference/pyiceberg, and peak memory. When the reference is slower
than ``target`` times PyIceberg, a cProfile of one reference plan is appended.

Run: ``lakeconf bench iceberg [--manifests N --entries N --delete-every N --repeat N]`` (or
``python -m conformance.formats.iceberg.bench``); the defaults are the full size (1,000 x 1,000);
``--manifests 20 --entries 200`` is a smoke run. ``--scale N,N,...`` repeats that at several data file
counts (manifests of ``--entries`` each) and fits the growth exponent of each engine's time and memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import sys
import tempfile
import time
from typing import Any, Sequence

from conformance.bench import (
    aggregate, engine_line, interleaved, validation_in_child, validation_line, verdict_lines, loadavg as _loadavg, maxrss_mb as _maxrss_mb, measure_in_child, profile_call, ratios,
    say as _say, scale_summary as shared_scale_summary, scaled, parse_sizes, timed,
)

TARGET_RATIO = 0.5  # #14: planning at most half of pyiceberg's wall time
PARTITIONS = 16
SNAPSHOT_ID = 9_000_000_001


# --------------------------------------------------------------------------------------------
# Building the table
# --------------------------------------------------------------------------------------------


def _schema_and_spec():
    from reference_impl.iceberg import partitioning as P
    from reference_impl.iceberg import transforms as X
    from reference_impl.iceberg import types as T

    schema = T.Schema(schema_id=0, fields=(
        T.NestedField(id=1, name="id", type=T.LONG, required=True),
        T.NestedField(id=2, name="name", type=T.STRING),
        T.NestedField(id=3, name="value", type=T.DOUBLE),
        T.NestedField(id=4, name="cat", type=T.STRING),
    ))
    spec = P.PartitionSpec(spec_id=0, fields=(
        P.PartitionField(source_ids=(4,), field_id=1000, name="cat", transform=X.IdentityTransform()),))
    return schema, spec


def _data_file(storage, m: int, i: int):
    from reference_impl.iceberg import manifests as MF

    n = m * 1_000_003 + i
    cat = f"c{i % PARTITIONS:02d}"
    rows = 1000 + n % 997
    return MF.DataFile(
        file_path=storage.uri(f"data/cat={cat}/{m:05d}-{i:05d}-{n:08x}-0000-4000-8000-{n:012x}.parquet"),
        file_format="parquet", record_count=rows, file_size_in_bytes=10_000 + n % 5_000, partition={1000: cat},
        column_sizes={1: 8 * rows, 2: 12 * rows, 3: 8 * rows, 4: 3 * rows},
        value_counts={1: rows, 2: rows, 3: rows, 4: rows},
        null_value_counts={1: 0, 2: n % 5, 3: n % 3, 4: 0}, nan_value_counts={3: 0},
        lower_bounds={1: struct.pack("<q", n * 10_000), 2: f"a{n:08d}".encode(), 3: struct.pack("<d", -1.5 * (n % 100)), 4: cat.encode()},
        upper_bounds={1: struct.pack("<q", n * 10_000 + rows - 1), 2: f"z{n:08d}".encode(), 3: struct.pack("<d", 1.5 * (n % 100)), 4: cat.encode()},
        split_offsets=(4,), sort_order_id=0,
    )


def build_table(path: str, *, manifests: int = 1_000, entries: int = 1_000, delete_every: int = 100) -> dict:
    """Write the benchmark table at ``path``; returns what was built (counts, sizes, seconds)."""
    from reference_impl.iceberg import manifests as MF
    from reference_impl.iceberg import metadata as M
    from reference_impl.iceberg import partitioning as P
    from reference_impl.storage import LocalStorage

    schema, spec = _schema_and_spec()
    storage = LocalStorage(path)
    t0 = time.perf_counter()
    mfs: list[MF.ManifestFile] = []
    pending_deletes: list[MF.ManifestEntry] = []
    n_data = n_deletes = n_delete_manifests = manifest_bytes = 0

    def flush_deletes(seq: int) -> None:
        nonlocal n_delete_manifests, manifest_bytes
        rel = f"metadata/deletes-{n_delete_manifests:05d}.avro"
        raw = MF.write_manifest(pending_deletes, schema=schema, spec=spec, format_version=2, content=MF.MANIFEST_DELETES)
        storage.put_if_absent(rel, raw)
        manifest_bytes += len(raw)
        mfs.append(MF.manifest_file_for(pending_deletes, manifest_path=storage.uri(rel), manifest_length=len(raw), spec=spec,
                                        schema=schema, added_snapshot_id=SNAPSHOT_ID - 1_000_000 + seq, sequence_number=seq,
                                        content=MF.MANIFEST_DELETES))
        n_delete_manifests += 1
        pending_deletes.clear()

    for m in range(manifests):
        seq = m + 1
        es = []
        for i in range(entries):
            d = _data_file(storage, m, i)
            es.append(MF.ManifestEntry(status=MF.ADDED, data_file=d))
            if delete_every and (m * entries + i) % delete_every == 0:
                target = d.file_path
                pos = MF.DataFile(
                    file_path=storage.uri(f"data/cat={d.partition[1000]}/delete-{m:05d}-{i:05d}.parquet"), file_format="parquet",
                    content=MF.POSITION_DELETES, record_count=3, file_size_in_bytes=1_500, partition=d.partition,
                    referenced_data_file=target, value_counts={2147483546: 3, 2147483545: 3},
                    null_value_counts={2147483546: 0, 2147483545: 0},
                    lower_bounds={2147483546: target.encode(), 2147483545: struct.pack("<q", 0)},
                    upper_bounds={2147483546: target.encode(), 2147483545: struct.pack("<q", 2)},
                )
                # Same commit as the data: sequence numbers equal, so the delete applies (<=).
                pending_deletes.append(MF.ManifestEntry(status=MF.ADDED, data_file=pos))
                n_deletes += 1
        rel = f"metadata/data-{m:05d}.avro"
        raw = MF.write_manifest(es, schema=schema, spec=spec, format_version=2)
        storage.put_if_absent(rel, raw)
        manifest_bytes += len(raw)
        mfs.append(MF.manifest_file_for(es, manifest_path=storage.uri(rel), manifest_length=len(raw), spec=spec, schema=schema,
                                        added_snapshot_id=SNAPSHOT_ID - 1_000_000 + seq, sequence_number=seq))
        n_data += len(es)
        if len(pending_deletes) >= entries or (m == manifests - 1 and pending_deletes):
            flush_deletes(seq)
        if (m + 1) % max(1, manifests // 10) == 0 or m == manifests - 1:
            _say(f"  built {m + 1}/{manifests} manifests, {n_data} data files, {n_deletes} delete files "
                 f"({time.perf_counter() - t0:.1f}s)")
    # Newest manifests first, as Java lists them.
    mfs.reverse()
    seq = manifests + 1
    ml_rel = f"metadata/snap-{SNAPSHOT_ID}.avro"
    storage.put_if_absent(ml_rel, MF.write_manifest_list(mfs, format_version=2, snapshot_id=SNAPSHOT_ID, sequence_number=seq))
    now = int(time.time() * 1000)
    snap = M.Snapshot(snapshot_id=SNAPSHOT_ID, timestamp_ms=now, sequence_number=seq, manifest_list=storage.uri(ml_rel),
                      summary={"operation": "append"}, schema_id=0)
    md = M.TableMetadata(
        format_version=2, table_uuid="2f1e0d3c-4b5a-4978-8a6b-5c4d3e2f1a0b", location=storage.root, last_sequence_number=seq,
        last_updated_ms=now, last_column_id=4, schemas=(schema,), current_schema_id=0, partition_specs=(spec,),
        default_spec_id=0, last_partition_id=1000, current_snapshot_id=SNAPSHOT_ID, snapshots=(snap,),
        snapshot_log=(M.SnapshotLogEntry(snapshot_id=SNAPSHOT_ID, timestamp_ms=now),), sort_orders=(P.UNSORTED,),
        refs={"main": M.SnapshotRef(snapshot_id=SNAPSHOT_ID, type="branch")},
    )
    storage.put_if_absent("metadata/v1.metadata.json", M.metadata_to_json(md).encode())
    storage.write_atomic("metadata/version-hint.text", b"1")
    return {"manifests": manifests, "entries_per_manifest": entries, "data_files": n_data, "delete_files": n_deletes,
            "delete_manifests": n_delete_manifests, "manifest_bytes": manifest_bytes,
            "build_seconds": round(time.perf_counter() - t0, 2), "metadata": os.path.join(path, "metadata", "v1.metadata.json")}


def build_history(path: str, snapshots: int) -> dict:
    """A format-v2 table of ``snapshots`` snapshots in one parent chain, for the validation benchmark.

    Each snapshot overwrites the previous one's single data file (one manifest with the ADDED file
    and the DELETED one, one manifest list): the history grows linearly with the snapshot count, so
    validation time per snapshot says whether the validator is linear. Data files do not exist.
    """
    from reference_impl.iceberg import manifests as MF
    from reference_impl.iceberg import metadata as M
    from reference_impl.iceberg import partitioning as P
    from reference_impl.storage import LocalStorage

    schema, spec = _schema_and_spec()
    storage = LocalStorage(path)
    t0 = time.perf_counter()
    base, now = SNAPSHOT_ID, int(time.time() * 1000) - snapshots * 1000
    snaps, log, previous = [], [], None
    for k in range(1, snapshots + 1):
        sid = base + k
        d = _data_file(storage, k, 0)
        entries = [MF.ManifestEntry(status=MF.ADDED, data_file=d)]
        if previous is not None:
            entries.append(MF.ManifestEntry(status=MF.DELETED, data_file=previous, snapshot_id=sid,
                                            sequence_number=k - 1, file_sequence_number=k - 1))
        raw = MF.write_manifest(entries, schema=schema, spec=spec, format_version=2)
        rel = f"metadata/m-{k:06d}.avro"
        storage.put_if_absent(rel, raw)
        mf = MF.manifest_file_for(entries, manifest_path=storage.uri(rel), manifest_length=len(raw), spec=spec,
                                  schema=schema, added_snapshot_id=sid, sequence_number=k)
        ml = f"metadata/snap-{sid}.avro"
        storage.put_if_absent(ml, MF.write_manifest_list([mf], format_version=2, snapshot_id=sid, sequence_number=k,
                                                         parent_snapshot_id=sid - 1 if k > 1 else None))
        ts = now + k * 1000
        snaps.append(M.Snapshot(snapshot_id=sid, parent_snapshot_id=sid - 1 if k > 1 else None, timestamp_ms=ts,
                                sequence_number=k, manifest_list=storage.uri(ml),
                                summary={"operation": "append" if k == 1 else "overwrite"}, schema_id=0))
        log.append(M.SnapshotLogEntry(snapshot_id=sid, timestamp_ms=ts))
        previous = d
        if k % max(1, snapshots // 10) == 0:
            _say(f"  built {k}/{snapshots} snapshots ({time.perf_counter() - t0:.1f}s)")
    md = M.TableMetadata(
        format_version=2, table_uuid="2f1e0d3c-4b5a-4978-8a6b-5c4d3e2f1a0b", location=storage.root,
        last_sequence_number=snapshots, last_updated_ms=now + snapshots * 1000, last_column_id=4, schemas=(schema,),
        current_schema_id=0, partition_specs=(spec,), default_spec_id=0, last_partition_id=1000,
        current_snapshot_id=base + snapshots, snapshots=tuple(snaps), snapshot_log=tuple(log), sort_orders=(P.UNSORTED,),
        refs={"main": M.SnapshotRef(snapshot_id=base + snapshots, type="branch")},
    )
    storage.put_if_absent("metadata/v1.metadata.json", M.metadata_to_json(md).encode())
    storage.write_atomic("metadata/version-hint.text", b"1")
    return {"snapshots": snapshots, "build_seconds": round(time.perf_counter() - t0, 2)}


def run_validation(sizes: Sequence[int], workdir: str | None = None) -> list[dict]:
    """The reference validator on histories of each size (snapshots), each in a fresh process."""
    out = []
    if workdir:
        os.makedirs(workdir, exist_ok=True)
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="lakeconf-iceberg-history-", dir=workdir) as d:
            path = os.path.join(d, "table")
            _say(f"building a {n:,}-snapshot Iceberg table")
            built = build_history(path, n)
            figures = validation_in_child("iceberg", path)
            out.append({"snapshots": n, **built, **figures})
            print(validation_line(f"iceberg, {n:,} snapshots", figures), flush=True)
    return out


# --------------------------------------------------------------------------------------------
# Measuring (each call runs in its own subprocess)
# --------------------------------------------------------------------------------------------


def _digest(plan: list[tuple[str, list[str]]]) -> str:
    h = hashlib.sha256()
    for path, deletes in sorted(plan):
        h.update(path.encode())
        for d in sorted(deletes):
            h.update(b"\x00" + d.encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def _plan_reference(path: str) -> list:
    from reference_impl.iceberg import snapshots as S
    from reference_impl.iceberg.scan import plan_files
    from reference_impl.iceberg.table import load_table
    from reference_impl.storage import LocalStorage

    storage = LocalStorage(path)
    md = load_table(storage)
    return plan_files(storage, md, S.current_snapshot(md))


def _plan_pyiceberg(path: str) -> list:
    from pyiceberg.table import StaticTable

    table = StaticTable.from_metadata(os.path.join(path, "metadata", "v1.metadata.json"))
    return list(table.scan().plan_files())


def _as_pairs(engine: str, tasks: list) -> list[tuple[str, list[str]]]:
    """(data file path, delete file paths) per task, whichever engine planned them."""
    if engine == "reference":
        return [(t.data_file.file_path, [d.file_path for d in t.deletes]) for t in tasks]
    return [(t.file.file_path, [d.file_path for d in t.delete_files]) for t in tasks]


def _measure(engine: str, path: str) -> dict:
    """One timed plan in this process (imports done first and not timed)."""
    if engine == "reference":
        import reference_impl.iceberg.scan  # noqa: F401
        import reference_impl.iceberg.table  # noqa: F401

        fn = _plan_reference
    else:
        import pyiceberg.table  # noqa: F401
        import pyiceberg.io.pyarrow  # noqa: F401

        fn = _plan_pyiceberg
    # only planning is timed; turning the tasks into comparable pairs is not
    tasks, seconds, cpu, baseline = timed(lambda: fn(path))
    plan = _as_pairs(engine, tasks)
    return {"engine": engine, "seconds": seconds, "cpu_seconds": cpu, "tasks": len(plan),
            "deletes": sum(len(d) for _p, d in plan), "digest": _digest(plan),
            "maxrss_mb": round(_maxrss_mb(), 1), "baseline_rss_mb": round(baseline, 1)}


def _child(engine: str, path: str, *, profile: bool = False) -> dict:
    return measure_in_child("conformance.formats.iceberg.bench", engine, path, profile=profile)


def _profile_reference(path: str) -> str:
    import reference_impl.iceberg.scan  # noqa: F401 - imported before profiling starts
    import reference_impl.iceberg.table  # noqa: F401

    return profile_call(_plan_reference, path)


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------


def run_iceberg(manifests: int = 1_000, entries: int = 1_000, delete_every: int = 100, repeat: int = 3,
                workdir: str | None = None, *, keep: bool = False, target: float = TARGET_RATIO, profile: bool = True,
                reuse: bool = False) -> dict:
    """Build the table, time both engines' scan planning ``repeat`` times each, return the figures."""
    own = workdir is None
    root = tempfile.mkdtemp(prefix="lakeconf-bench-") if own else workdir
    path = os.path.join(root, "bench_iceberg")
    stamp = os.path.join(root, "bench_iceberg.built.json")
    wanted = {"manifests": manifests, "entries_per_manifest": entries, "delete_every": delete_every}
    built = None
    if reuse and os.path.exists(stamp):
        with open(stamp, encoding="utf-8") as fh:
            old = json.load(fh)
        if all(old.get(k) == v for k, v in wanted.items()):
            built = old
            _say(f"reusing the table built earlier at {path}")
    if built is None:
        if os.path.exists(path):
            shutil.rmtree(path)
        _say(f"building {manifests} manifests x {entries} entries (a position delete every {delete_every} data files) at {path}")
        built = dict(build_table(path, manifests=manifests, entries=entries, delete_every=delete_every), delete_every=delete_every)
        if not own:
            with open(stamp, "w", encoding="utf-8") as fh:
                json.dump(built, fh)
    load_before = _loadavg()
    runs = interleaved(("reference", "pyiceberg"), repeat, lambda engine: _child(engine, path),
                       lambda r: f"{r['seconds']:.3f}s wall, {r['cpu_seconds']:.3f}s CPU, {r['tasks']} tasks, "
                                 f"{r['deletes']} deletes, peak {r['maxrss_mb']} MB")
    result: dict[str, Any] = {"table": path, "built": built, "repeat": repeat, "data_files_exist": False,
                              "target_ratio": target, "findings": [], "load_average": load_before, "cpus": os.cpu_count()}
    for engine, rs in runs.items():
        result[engine] = aggregate(rs, keep=("tasks", "deletes", "digest"))
        if "error" in result[engine]:
            result["findings"].append(f"{engine} failed to plan the scan: {result[engine]['error'][-500:]}")
    ref, py = result.get("reference", {}), result.get("pyiceberg", {})
    result.update(ratios(ref, py))
    if "median_seconds" in ref and "median_seconds" in py:
        if (ref["tasks"], ref["deletes"], ref["digest"]) != (py["tasks"], py["deletes"], py["digest"]):
            result["findings"].append(
                f"plans disagree: reference {ref['tasks']} tasks / {ref['deletes']} deletes (digest {ref['digest']}), "
                f"pyiceberg {py['tasks']} tasks / {py['deletes']} deletes (digest {py['digest']})")
        if ref["tasks"] != built["data_files"] or ref["deletes"] != built["delete_files"]:
            result["findings"].append(f"reference plans {ref['tasks']} tasks / {ref['deletes']} deletes, the builder wrote "
                                      f"{built['data_files']} / {built['delete_files']}")
        if profile and result["ratio"] is not None and result["ratio"] > target:
            _say(f"reference is {result['ratio']}x pyiceberg (target {target}x): profiling one reference plan")
            prof = _child("reference", path, profile=True)
            result["profile"] = prof.get("profile") or prof.get("error", "")
    if own and not keep:
        shutil.rmtree(root, ignore_errors=True)
        result["table"] += " (deleted)"
    return result


def run_scale(totals: Sequence[int], entries: int = 1_000, delete_every: int = 100, repeat: int = 3,
              workdir: str | None = None) -> dict:
    """``run_iceberg`` at each data file count (manifests = total / ``entries``), then the fitted growth exponents."""

    def run_at(total: int) -> tuple[int, dict, dict]:
        manifests = max(1, total // entries)
        _say(f"  {manifests:,} manifests x {entries:,} entries")
        wd = os.path.join(workdir, f"scale-{total}") if workdir else None
        r = run_iceberg(manifests, entries, delete_every, repeat, wd, profile=False, reuse=wd is not None)
        return r["built"]["data_files"], r, {"deletes": r["built"]["delete_files"]}

    return scaled(totals, run_at, ("reference", "pyiceberg"), "data files")


def scale_summary(out: dict) -> str:
    return shared_scale_summary(out, "Iceberg scan planning", agree="both engines plan the same files and deletes",
                                detail=lambda row: f" ({row['deletes']:,} deletes)")


def summary(result: dict) -> str:
    """A printable summary of ``run_iceberg``'s result."""
    b = result["built"]
    lines = [
        "Iceberg scan planning: reference plan_files vs pyiceberg plan_files",
        f"  table: {b['manifests']} data manifests x {b['entries_per_manifest']} entries = {b['data_files']} data files, "
        f"{b['delete_files']} position delete files in {b['delete_manifests']} delete manifests, "
        f"{b['manifest_bytes'] / 1e6:.1f} MB of manifests, built in {b['build_seconds']}s",
        "  data files do not exist: planning reads the metadata JSON, the manifest list and the manifests only",
        f"  each plan in a fresh subprocess, {result['repeat']} runs per engine, interleaved (first engine alternating); "
        f"{result.get('cpus')} CPUs, load average {result.get('load_average')} when timing began",
    ]
    for engine in ("reference", "pyiceberg"):
        r = result.get(engine, {})
        if r:
            lines.append(engine_line(engine, r, "" if "error" in r else f", {r['tasks']} tasks, {r['deletes']} deletes"))
    lines += verdict_lines(result, "pyiceberg", agree="both engines plan the same data files with the same delete files",
                           work="plan")
    return "\n".join(lines)


def _parse(argv: list[str]):
    import argparse

    p = argparse.ArgumentParser(prog="lakeconf bench iceberg", description="Iceberg scan planning: reference vs pyiceberg.")
    p.add_argument("--manifests", type=int, default=1_000, help="data manifests in the snapshot (default 1000)")
    p.add_argument("--entries", type=int, default=1_000, help="data files per manifest (default 1000)")
    p.add_argument("--delete-every", type=int, default=100, help="one position delete file per N data files (0: none; default 100)")
    p.add_argument("--repeat", type=int, default=3, help="timed plans per engine (default 3)")
    p.add_argument("--workdir", default=None, help="where to build the table (kept); default: a temporary directory")
    p.add_argument("--reuse", action="store_true", help="with --workdir: reuse a table built there with the same sizes")
    p.add_argument("--target", type=float, default=TARGET_RATIO, help="profile the reference when slower than this ratio")
    p.add_argument("--no-profile", action="store_true", help="do not profile the reference when over the target")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--validate", default=None, metavar="N[,N...]",
                   help="instead: time the reference validator on histories of N snapshots each (e.g. 1000,10000)")
    p.add_argument("--scale", default=None, metavar="N[,N...]",
                   help="instead: run at each data file count (e.g. 10000,100000,1000000; manifests = N / --entries) "
                        "and fit the growth exponent")
    return p.parse_args([a for a in argv if a != "--"])


def main(argv: list[str] | None = None) -> int:
    """``lakeconf bench iceberg [options]``: exit 1 when the engines' plans disagree (a finding), else 0."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "_measure":  # internal: one timed plan in this (child) process
        engine, path = argv[1], argv[2]
        if "--profile" in argv:
            print(_profile_reference(path))
        print(json.dumps(_measure(engine, path)))
        return 0
    args = _parse(argv)
    if args.validate:
        result = run_validation(parse_sizes(args.validate), args.workdir)
        if args.json:
            print(json.dumps(result, indent=1))
        return 1 if any("error" in r for r in result) else 0
    if args.scale:
        sres = run_scale(parse_sizes(args.scale), args.entries, args.delete_every,
                         args.repeat, args.workdir)
        print(json.dumps(sres, indent=1) if args.json else scale_summary(sres))
        return 1 if sres["findings"] else 0
    result = run_iceberg(args.manifests, args.entries, args.delete_every, args.repeat, args.workdir,
                         target=args.target, profile=not args.no_profile, reuse=args.reuse)
    print(json.dumps(result, indent=1) if args.json else summary(result))
    return 1 if result["findings"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
