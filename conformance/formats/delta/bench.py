"""Snapshot-loading benchmark: the reference implementation against deltalake (delta-rs) on one big log.

``run_delta`` builds a Delta table whose log holds ``files`` add actions over ``commits`` commits
(partitioned, with stats, and with removes of earlier files from the second commit on so that
reconciliation matters), checkpointed every ``checkpoint_interval`` commits by the reference
checkpoint writer. The commits are written as NDJSON directly, for speed: the data files they
name do not exist, which snapshot loading never notices (it reads only the log).

Each engine then opens the latest snapshot and lists its live files, ``repeat`` times, each time
in a fresh subprocess (so one engine's caches and allocator never help or hurt the other, and the
peak resident set size is that process's own: VmHWM, or ``ru_maxrss`` where /proc is missing). The summary gives the median load
time, the ratio reference/deltalake, the peak RSS and the RSS right after imports (the baseline the
load adds to), and checks that both engines list the same live files. When the reference is more
than ``target`` times slower, a cProfile of one reference load is appended, so the time can be
attributed to functions.

``--scale N,N,...`` repeats that at several counts of add actions over the same commits and fits
the growth exponent of each engine's time and memory.

Run: ``lakeconf bench delta [--files N --commits N --checkpoint-interval N --repeat N] [--scale N,N]`` (or
``python -m conformance.formats.delta.bench`` with the same options).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
import time
from typing import Any, Sequence

from conformance.bench import (
    aggregate, engine_line, interleaved, verdict_lines, loadavg, maxrss_mb, measure_in_child, profile_call, ratios, say, scaled,
    scale_summary as shared_scale_summary, parse_sizes, timed, validation_in_child, validation_line,
)

TARGET_RATIO = 1.0
PARTITIONS = 16  # partition values p=0..15: realistic directory fan-out and partitionValues parsing
REMOVES_PER_COMMIT_FRACTION = 0.1  # each commit removes ~10% as many files as it adds


# --------------------------------------------------------------------------------------------
# Building the table
# --------------------------------------------------------------------------------------------

SCHEMA_STRING = json.dumps(
    {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "value", "type": "double", "nullable": True, "metadata": {}},
            {"name": "name", "type": "string", "nullable": True, "metadata": {}},
            {"name": "p", "type": "string", "nullable": True, "metadata": {}},
        ],
    },
    separators=(",", ":"),
)


def _add(n: int, ts: int) -> dict:
    part = str(n % PARTITIONS)
    rows = 1000 + n % 997
    stats = {
        "numRecords": rows,
        "minValues": {"id": n * 10_000, "value": -1.5 * (n % 100), "name": f"a{n:08d}"},
        "maxValues": {"id": n * 10_000 + rows - 1, "value": 1.5 * (n % 100), "name": f"z{n:08d}"},
        "nullCount": {"id": 0, "value": n % 3, "name": n % 5},
    }
    return {
        "path": f"p={part}/part-{n:07d}-{n:08x}-0000-4000-8000-{n:012x}.c000.snappy.parquet",
        "partitionValues": {"p": part},
        "size": 10_000 + n % 5_000,
        "modificationTime": ts,
        "dataChange": True,
        "stats": json.dumps(stats, separators=(",", ":")),
    }


def _remove(add: dict, ts: int) -> dict:
    return {
        "path": add["path"],
        "deletionTimestamp": ts,
        "dataChange": True,
        "extendedFileMetadata": True,
        "partitionValues": add["partitionValues"],
        "size": add["size"],
    }


def build_table(
    path: str, *, files: int = 100_000, commits: int = 1_000, checkpoint_interval: int = 100,
    checkpoint_writer: str = "reference", seed: int = 7,
) -> dict:
    """Write the benchmark table at ``path``; returns counts (adds, removes, live, checkpoints)."""
    from reference_impl.delta.actions import parse_action
    from reference_impl.delta.checkpoint import write_checkpoint
    from reference_impl.delta.replay import SnapshotState
    from reference_impl.storage import LocalStorage

    rng = random.Random(seed)
    log_dir = os.path.join(path, "_delta_log")
    os.makedirs(log_dir, exist_ok=True)
    storage = LocalStorage(path)
    now = int(time.time() * 1000)
    base = now - commits * 1000 - 60_000  # recent: no tombstone expires under the default retention
    per_commit = -(-files // commits)
    removes_per_commit = max(1, int(per_commit * REMOVES_PER_COMMIT_FRACTION))
    live: dict[str, dict] = {}  # path -> add body
    live_list: list[str] = []
    # the reference checkpoint writer takes a SnapshotState; keep one incrementally (parsing
    # each wire action once) instead of replaying the whole log at every checkpoint
    st_files: dict = {}
    st_tombs: dict = {}
    protocol = metadata = None
    n = n_adds = n_removes = n_ckpt = 0
    t0 = time.perf_counter()
    for v in range(commits):
        ts = base + v * 1000
        actions: list[dict] = [{"commitInfo": {"timestamp": ts, "operation": "WRITE", "engineInfo": "lakeconf-bench"}}]
        if v == 0:
            actions.append({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})
            actions.append(
                {
                    "metaData": {
                        "id": "00000000-0000-4000-8000-00000000be4c",
                        "format": {"provider": "parquet", "options": {}},
                        "schemaString": SCHEMA_STRING,
                        "partitionColumns": ["p"],
                        "configuration": {},
                        "createdTime": base,
                    }
                }
            )
        if v >= 1 and live_list:
            for _ in range(min(removes_per_commit, len(live_list))):
                i = rng.randrange(len(live_list))
                live_list[i], live_list[-1] = live_list[-1], live_list[i]
                victim = live.pop(live_list.pop())
                actions.append({"remove": _remove(victim, ts)})
                n_removes += 1
        for _ in range(min(per_commit, files - n_adds)):
            body = _add(n, ts)
            n += 1
            live[body["path"]] = body
            live_list.append(body["path"])
            actions.append({"add": body})
            n_adds += 1
        with open(os.path.join(log_dir, f"{v:020d}.json"), "w", encoding="utf-8") as fh:
            for a in actions:
                fh.write(json.dumps(a, separators=(",", ":")))
                fh.write("\n")
        for a in actions:
            if "commitInfo" in a:
                continue
            obj = parse_action(a, version=v)
            kind = next(iter(a))
            if kind == "protocol":
                protocol = obj
            elif kind == "metaData":
                metadata = obj
            elif kind == "add":
                st_files[(obj.path, None)] = obj
                st_tombs.pop((obj.path, None), None)
            elif kind == "remove":
                st_files.pop((obj.path, None), None)
                st_tombs[(obj.path, None)] = obj
        if checkpoint_interval and v > 0 and v % checkpoint_interval == 0:
            if checkpoint_writer == "deltalake":
                from deltalake import DeltaTable

                DeltaTable(path).create_checkpoint()
            else:
                state = SnapshotState(version=v, protocol=protocol, metadata=metadata, files=dict(st_files),
                                      tombstones=dict(st_tombs))
                write_checkpoint(storage, state, kind="classic")
            n_ckpt += 1
        if (v + 1) % max(1, commits // 10) == 0 or v == commits - 1:
            say(f"  built {v + 1}/{commits} commits, {n_adds} adds, {n_removes} removes, {len(live)} live, "
                 f"{n_ckpt} checkpoints ({time.perf_counter() - t0:.1f}s)")
    return {"adds": n_adds, "removes": n_removes, "live": len(live), "checkpoints": n_ckpt,
            "commits": commits, "build_seconds": round(time.perf_counter() - t0, 2),
            "checkpoint_writer": checkpoint_writer}


# --------------------------------------------------------------------------------------------
# Measuring (each call runs in its own subprocess)
# --------------------------------------------------------------------------------------------


def _digest(paths: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(paths)).encode()).hexdigest()[:16]


def _load_reference(path: str) -> list[str]:
    # The snapshot's live paths, as deltalake's file_uris() gives them: neither side builds an
    # object per file (the reference builds its AddFiles only when a reader asks for them).
    from reference_impl.delta.table import Snapshot

    return Snapshot.load(path).file_paths()


def _load_deltalake(path: str) -> list[str]:
    from urllib.parse import unquote

    from deltalake import DeltaTable

    dt = DeltaTable(path)
    root = os.path.abspath(path).rstrip("/") + "/"
    out = []
    for uri in dt.file_uris():
        p = unquote(uri[len("file://"):] if uri.startswith("file://") else uri)
        out.append(p[len(root):] if p.startswith(root) else p)
    return out


def _measure(engine: str, path: str) -> dict:
    """One timed snapshot load in this process (imports done first and not timed)."""
    if engine == "reference":
        import reference_impl.delta.checkpoint  # noqa: F401
        import reference_impl.delta.replay  # noqa: F401

        fn = _load_reference
    else:
        import deltalake  # noqa: F401

        fn = _load_deltalake
    paths, seconds, cpu, baseline = timed(lambda: fn(path))
    return {"engine": engine, "seconds": seconds, "cpu_seconds": cpu, "files": len(paths), "digest": _digest(paths),
            "maxrss_mb": round(maxrss_mb(), 1), "baseline_rss_mb": round(baseline, 1)}


def _child(engine: str, path: str, *, profile: bool = False) -> dict:
    return measure_in_child("conformance.formats.delta.bench", engine, path, profile=profile)


def _profile_reference(path: str) -> str:
    import reference_impl.delta.checkpoint  # noqa: F401 - imported before profiling starts
    import reference_impl.delta.replay  # noqa: F401

    return profile_call(_load_reference, path)


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------


def run_delta(files: int = 100_000, commits: int = 1_000, checkpoint_interval: int = 100, repeat: int = 3,
              workdir: str | None = None, *, checkpoint_writer: str = "reference", keep: bool = False,
              target: float = TARGET_RATIO, profile: bool = True) -> dict:
    """Build the table, time both engines' snapshot loads ``repeat`` times each, return the figures."""
    own = workdir is None
    root = tempfile.mkdtemp(prefix="lakeconf-bench-") if own else workdir
    path = os.path.join(root, "bench_delta")
    if os.path.exists(path):
        shutil.rmtree(path)
    say(f"building {files} adds over {commits} commits, checkpoint every {checkpoint_interval} at {path}")
    built = build_table(path, files=files, commits=commits, checkpoint_interval=checkpoint_interval,
                        checkpoint_writer=checkpoint_writer)
    load_before = loadavg()
    runs = interleaved(("reference", "deltalake"), repeat, lambda engine: _child(engine, path),
                       lambda r: f"{r['seconds']:.3f}s, {r['files']} files, peak {r['maxrss_mb']} MB")
    result: dict[str, Any] = {"table": path, "built": built, "repeat": repeat, "data_files_exist": False,
                              "target_ratio": target, "findings": [], "load_average": load_before,
                              "cpus": os.cpu_count()}
    for engine, rs in runs.items():
        result[engine] = aggregate([r | {"live_files": r["files"]} if "error" not in r else r for r in rs],
                                   keep=("live_files", "digest"))
        if "error" in result[engine]:
            result["findings"].append(f"{engine} failed to load the snapshot: {result[engine]['error'][-500:]}")
    ref, dl = result.get("reference", {}), result.get("deltalake", {})
    result.update(ratios(ref, dl))
    if "median_seconds" in ref and "median_seconds" in dl:
        if ref["live_files"] != dl["live_files"] or ref["digest"] != dl["digest"]:
            result["findings"].append(
                f"live files disagree: reference {ref['live_files']} (digest {ref['digest']}), "
                f"deltalake {dl['live_files']} (digest {dl['digest']})"
            )
        if ref["live_files"] != built["live"]:
            result["findings"].append(f"reference lists {ref['live_files']} live files, the builder wrote {built['live']}")
        if profile and result["ratio"] is not None and result["ratio"] > target:
            say(f"reference is {result['ratio']}x deltalake (target {target}x): profiling one reference load")
            prof = _child("reference", path, profile=True)
            result["profile"] = prof.get("profile") or prof.get("error", "")
    if own and not keep:
        shutil.rmtree(root, ignore_errors=True)
        result["table"] += " (deleted)"
    return result


def summary(result: dict) -> str:
    """A printable summary of ``run_delta``'s result."""
    b = result["built"]
    lines = [
        "Delta snapshot loading: reference vs deltalake",
        f"  table: {b['adds']} add and {b['removes']} remove actions over {b['commits']} commits, "
        f"{b['live']} live files, {b['checkpoints']} checkpoints (written by {b['checkpoint_writer']}), built in {b['build_seconds']}s",
        "  data files do not exist: the log is written directly and snapshot loading reads only the log",
        f"  each load in a fresh subprocess, {result['repeat']} runs per engine, interleaved; "
        f"{result.get('cpus')} CPUs, load average {result.get('load_average')} when timing began",
    ]
    for engine in ("reference", "deltalake"):
        r = result.get(engine, {})
        if r:
            lines.append(engine_line(engine, r, "" if "error" in r else f", {r['live_files']} live files"))
    lines += verdict_lines(result, "deltalake", agree="both engines list the same live files", work="load")
    return "\n".join(lines)


def run_scale(totals: Sequence[int], commits: int = 1_000, checkpoint_interval: int = 100, repeat: int = 3,
              workdir: str | None = None) -> dict:
    """``run_delta`` at each count of add actions over the same ``commits`` (so files per commit grow with the size,
    and a load reads the latest checkpoint plus the same number of JSON commits), then the fitted growth exponents."""

    def run_at(total: int) -> tuple[int, dict, dict]:
        wd = os.path.join(workdir, f"scale-{total}") if workdir else None
        r = run_delta(total, commits, checkpoint_interval, repeat, wd, profile=False)
        return r["built"]["adds"], r, {"live": r["built"]["live"]}

    return scaled(totals, run_at, ("reference", "deltalake"), "adds")


def run_validation(sizes: list[int], checkpoint_interval: int, workdir: str | None = None) -> list[dict]:
    """The reference validator on logs of each size (commits, one add each), each in a fresh process."""
    out = []
    if workdir:
        os.makedirs(workdir, exist_ok=True)
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="lakeconf-delta-history-", dir=workdir) as d:
            path = os.path.join(d, "table")
            say(f"building a {n:,}-commit Delta table (checkpoint every {checkpoint_interval})")
            built = build_table(path, files=n, commits=n, checkpoint_interval=checkpoint_interval)
            figures = validation_in_child("delta", path)
            out.append({"commits": n, "checkpoint_interval": checkpoint_interval, **figures})
            print(validation_line(f"delta, {n:,} commits, checkpoint every {checkpoint_interval} "
                                  f"({built.get('checkpoints', '?')} checkpoints)", figures), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    """``lakeconf bench delta [--files N --commits N --checkpoint-interval N --repeat N --workdir DIR --json]``.

    Exit code 1 when the engines disagree (a finding), else 0; the ratio is reported, not enforced.
    """
    import argparse

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "_measure":  # internal: one timed load in this (child) process
        engine, path = argv[1], argv[2]
        if "--profile" in argv:
            print(_profile_reference(path))
        print(json.dumps(_measure(engine, path)))
        return 0
    p = argparse.ArgumentParser(prog="lakeconf bench delta", description="Delta snapshot loading: reference vs deltalake.")
    # positional form too (files commits interval repeat): an argparse REMAINDER in a parent parser
    # cannot pass leading --options through
    p.add_argument("numbers", nargs="*", type=int, metavar="N", help="files commits checkpoint-interval repeat")
    p.add_argument("--files", type=int, default=100_000, help="add actions in the log (default 100000)")
    p.add_argument("--commits", type=int, default=1_000, help="commits (default 1000)")
    p.add_argument("--checkpoint-interval", type=int, default=100, help="a checkpoint every N commits (default 100)")
    p.add_argument("--repeat", type=int, default=3, help="timed loads per engine (default 3)")
    p.add_argument("--workdir", default=None, help="where to build the table (kept); default: a temporary directory")
    p.add_argument("--checkpoint-writer", choices=("reference", "deltalake"), default="reference")
    p.add_argument("--no-profile", action="store_true", help="do not profile the reference when over the target")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--validate", default=None, metavar="N[,N...]",
                   help="instead: time the reference validator on logs of N commits each (one add per commit, "
                        "--checkpoint-interval applies)")
    p.add_argument("--scale", default=None, metavar="N[,N...]",
                   help="instead: run at each count of add actions (e.g. 10000,100000,1000000; --commits and "
                        "--checkpoint-interval apply) and fit the growth exponent")
    args = p.parse_args([a for a in argv if a != "--"])
    for name, value in zip(("files", "commits", "checkpoint_interval", "repeat"), args.numbers):
        setattr(args, name, value)
    if args.validate:
        result = run_validation(parse_sizes(args.validate), args.checkpoint_interval, args.workdir)
        if args.json:
            print(json.dumps(result, indent=1))
        return 1 if any("error" in r for r in result) else 0
    if args.scale:
        sres = run_scale(parse_sizes(args.scale), args.commits, args.checkpoint_interval,
                         args.repeat, args.workdir)
        print(json.dumps(sres, indent=1) if args.json else shared_scale_summary(
            sres, "Delta snapshot loading", agree="both engines list the same live files",
            detail=lambda row: f" ({row['live']:,} live)"))
        return 1 if sres["findings"] else 0
    result = run_delta(args.files, args.commits, args.checkpoint_interval, args.repeat, args.workdir,
                       checkpoint_writer=args.checkpoint_writer, profile=not args.no_profile)
    print(json.dumps(result, indent=1) if args.json else summary(result))
    return 1 if result["findings"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
