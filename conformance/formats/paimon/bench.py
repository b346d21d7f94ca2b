"""Scan-planning benchmark: the reference's live-file replay against pypaimon's scan plan on one big Paimon table.

``build_table`` writes the metadata of a Paimon table directly (data files do not exist unless
``placeholders``: planning reads metadata only): ``schema/schema-0`` (version 3; ``id BIGINT NOT
NULL, name STRING, value DOUBLE, dt STRING NOT NULL``, partitioned by ``dt``, primary key ``(dt, id)``
with ``bucket`` fixed, or an append table with ``bucket-key=id``), then ``snapshots`` APPEND
commits, each adding ``files_per_snapshot`` level-0 data files spread round-robin over ``partitions``
x ``buckets``, with realistic ``_FILE`` records: min/max key BinaryRows, key stats, value stats of
every column, sequence numbers, creation time. Every 10th snapshot also replaces a tenth as many
earlier files in the same commit, as a writer compacting while it writes does (Java commits that
as a second, COMPACT snapshot; here it shares the APPEND one so that ``snapshots`` stays the count):
half are *upgraded* (DELETE at level 0, ADD of the same file name at level 5: only the level tells
the two identities apart) and half *rewritten* (DELETE, ADD of a new file at level 1, same keys
and sequence numbers); append tables rewrite only, at level 0. So the live set is exactly
``snapshots x files_per_snapshot`` files (1,000 x 100 = 100,000 by default) and the replay by
file identity has DELETE entries to apply.

Manifests are Avro (zstandard, Java's default ``manifest.compression``) under the reference's
writer schemas (``MANIFEST_ENTRY_SCHEMA``, ``MANIFEST_FILE_META_SCHEMA``): each record is encoded
once and containers are assembled from those datums behind the header ``encode_avro`` writes
(``_AvroFile``; checked byte-identical to ``encode_avro`` once per build), since merging rewrites
every entry ~20 times at the default size (11 s to build instead of 2 minutes). Each commit's delta manifest list names the one
new manifest; its base list is the previous base + delta, run through Java's minor manifest
compaction (``ManifestFileMerger.tryMinorCompaction`` with the defaults ``manifest.target-file-size``
8 MB and ``manifest.merge-min-count`` 30): manifests accumulate until their bytes reach the target
size (merged into new files rolled at that size) and a tail of 30 or more small ones is merged too;
merging replays entries by identity, so an ADD and its DELETE in the same candidates cancel and a
DELETE whose ADD lies in an older manifest is kept. The full compaction Java triggers on deleted
bytes (``manifest.full-compaction-threshold-size``) is not emulated. BinaryRows of keys are packed
directly (checked against ``binary_row.serialize_with_arity`` once per build), partitions and stats
go through ``binary_row``.

Each engine then plans the scan of the latest snapshot, ``repeat`` times, each in a fresh
subprocess, interleaved (``conformance.bench``): the reference replays base + delta manifests
(``manifests.live_files``) and applies the batch read's visibility filter (``table.visible``:
postpone bucket, level 0 under deletion vectors / first-row); pypaimon opens the table through its
file-system catalog (the table is built at ``<warehouse>/default.db/bench``) and runs
``new_read_builder().new_scan().plan().splits()``. The digests of the planned (partition, bucket,
file name) sets must agree. ``--scale`` repeats that at several sizes and fits the growth exponent;
``--validate`` times the reference validator on linear histories; ``--merge-read`` reads a small
primary-key table with real Parquet files (written by ``reference_impl.paimon.writer``) fully with
both engines and compares rows.

Run: ``lakeconf bench paimon [--snapshots N --files N --buckets N --partitions N --repeat N]``;
``--snapshots 20 --files 10`` is a smoke run.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import shutil
import struct
import sys
import tempfile
import time
from typing import Any, Sequence

from conformance.bench import (
    aggregate, engine_line, interleaved, loadavg as _loadavg, maxrss_mb as _maxrss_mb, measure_in_child, profile_call, ratios,
    say as _say, scale_summary as shared_scale_summary, scaled, parse_sizes, timed, validation_in_child, validation_line, verdict_lines,
)

TARGET_RATIO = 1.0
MODULE = "conformance.formats.paimon.bench"
DATABASE, TABLE = "default", "bench"
TARGET_MANIFEST_BYTES = 8 << 20  # manifest.target-file-size
MERGE_MIN_COUNT = 30  # manifest.merge-min-count
MAX_LEVEL = 5  # num-levels 6 (num-sorted-run.compaction-trigger 5 + 1): full compaction's output level
REWRITE_LEVEL = 1
CODEC = "zstandard"  # manifest.compression zstd
COMMIT_USER = "6f1a3c2e-5b4d-4e8f-9a0b-1c2d3e4f5a6b"
_T0_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def table_path(root: str) -> str:
    """Where the benchmark table lives under a work directory: ``<root>/warehouse/default.db/bench``."""
    return os.path.join(root, "warehouse", f"{DATABASE}.db", TABLE)


# --------------------------------------------------------------------------------------------
# Building the table
# --------------------------------------------------------------------------------------------


def _types():
    from reference_impl.paimon.types import parse_atomic

    return {name: parse_atomic(t) for name, t in
            (("id", "BIGINT NOT NULL"), ("name", "STRING"), ("value", "DOUBLE"), ("dt", "STRING NOT NULL"))}


def _schema(*, pk: bool, buckets: int):
    from reference_impl.paimon import schema as SC
    from reference_impl.paimon.types import DataField

    t = _types()
    fields = tuple(DataField(i, n, t[n]) for i, n in enumerate(("id", "name", "value", "dt")))
    options = {"bucket": str(buckets)}
    if not pk:
        options["bucket-key"] = "id"
    return SC.TableSchema(version=SC.CURRENT_VERSION, id=0, fields=fields, highest_field_id=3, partition_keys=("dt",),
                          primary_keys=("dt", "id") if pk else (), options=options, time_millis=_T0_MS - 60_000)


def _key_row(v: int) -> bytes:
    """``serialize_with_arity([v], [BIGINT NOT NULL])`` packed directly: arity 1, header + null bits, one slot."""
    return b"\x00\x00\x00\x01" + bytes(8) + struct.pack("<q", v)


def _zigzag(n: int) -> bytes:
    """An Avro long: zig-zag, then base-128 varint."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class _AvroFile:
    """Avro object containers of one schema assembled from datums encoded once each.

    Merging manifests rewrites the same entries many times (every entry of a 100,000-file table
    goes through ~20 merges); re-encoding each time made the build minutes long. The header (magic,
    ``avro.schema``, ``avro.codec``, sync marker) is the one ``manifests.encode_avro`` writes, each
    datum is fastavro's ``schemaless_writer`` output for the record, and blocks are cut where fastavro's
    writer cuts them (16,000 uncompressed bytes) and compressed as it compresses them, so a container
    is byte for byte what ``encode_avro`` writes for the same records, up to the random sync marker
    (``same_as_encode_avro`` checks that, once per build and in the tests).
    """

    SYNC_INTERVAL = 16_000  # fastavro's default sync_interval (1000 * SYNC_SIZE)

    def __init__(self, schema: dict, codec: str) -> None:
        import fastavro

        from reference_impl.paimon import manifests as M

        self.schema, self.codec = schema, codec
        self.parsed = fastavro.parse_schema(dict(schema))
        self.header = M.encode_avro(schema, [], codec=codec)  # no records: the header only
        self.sync = self.header[-16:]
        if codec == "null":
            self.compress = None
        elif codec == "zstandard":
            try:
                from compression import zstd  # type: ignore[import-not-found]  # Python >= 3.14
            except ImportError:
                from backports import zstd  # type: ignore[import-not-found,no-redef]  # what fastavro uses before 3.14
            self.compress = zstd.compress
        else:
            raise ValueError(f"codec {codec!r}: the benchmark writes 'null' or 'zstandard' manifests")

    def datum(self, record: dict) -> bytes:
        import fastavro

        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, self.parsed, record)
        return buf.getvalue()

    def container(self, datums: list[bytes]) -> bytes:
        out = [self.header]
        block: list[bytes] = []
        size = 0

        def flush() -> None:
            data = b"".join(block)
            if self.compress is not None:
                data = self.compress(data)
            out.extend((_zigzag(len(block)), _zigzag(len(data)), data, self.sync))

        for d in datums:
            block.append(d)
            size += len(d)
            if size >= self.SYNC_INTERVAL:
                flush()
                block, size = [], 0
        if block:
            flush()
        return b"".join(out)

    def same_as_encode_avro(self, records: list[dict]) -> bool:
        """Whether ``container`` of these records equals ``encode_avro``'s bytes with its sync marker swapped in."""
        from reference_impl.paimon import manifests as M

        theirs = M.encode_avro(self.schema, records, codec=self.codec)
        their_sync = theirs[len(self.header) - 16:len(self.header)]
        return theirs.replace(their_sync, self.sync) == self.container([self.datum(r) for r in records])


class _Builder:
    """The files of the table being built and the commit logic (manifests, minor compaction, snapshots).

    A "file record" is one DataFileMeta (an upgraded file is a second record with the same name at
    another level); entries refer to records by index. Manifests keep their entries as
    (kind, record) pairs so that merging never decodes Avro.
    """

    def __init__(self, path: str, *, buckets: int, partitions: int, pk: bool, placeholders: bool,
                 target_bytes: int, merge_min_count: int, codec: str) -> None:
        from reference_impl.paimon import binary_row as BR
        from reference_impl.paimon import manifests as M
        from reference_impl.paimon import schema as SC

        self.BR, self.M = BR, M
        self.path, self.buckets, self.partitions, self.pk = path, buckets, partitions, pk
        self.placeholders, self.target_bytes, self.merge_min_count, self.codec = placeholders, target_bytes, merge_min_count, codec
        t = _types()
        self.value_types = [t["id"], t["name"], t["value"], t["dt"]]
        self.key_types = [t["id"]]
        assert _key_row(123_456_789) == BR.serialize_with_arity([123_456_789], self.key_types)
        self.dts = [(dt.date(2026, 1, 1) + dt.timedelta(days=p)).isoformat() for p in range(partitions)]
        self.part_rows = [BR.serialize_with_arity([d], [t["dt"]]) for d in self.dts]
        self.empty_stats = {"_MIN_VALUES": BR.EMPTY_ROW_SERIALIZED, "_MAX_VALUES": BR.EMPTY_ROW_SERIALIZED, "_NULL_COUNTS": []}
        # file records (parallel lists)
        self.f_part: list[int] = []
        self.f_bucket: list[int] = []
        self.f_level: list[int] = []
        self.f_name: list[str] = []
        self.f_rows: list[int] = []
        self.f_key: list[int] = []
        self.f_seq: list[int] = []
        self.f_time: list[int] = []
        self.f_source: list[int] = []
        self.f_vstats: list[tuple[bytes, bytes]] = []
        self.seq = 0
        self.counter = 0  # file-name counter
        self.n_manifest = 0
        self.n_list = 0
        self.salt = hashlib.sha256(path.encode()).hexdigest()[:12]
        # manifests: name -> (entries [(kind, rec)], size)
        self.manifests: dict[str, tuple[list[tuple[int, int]], int]] = {}
        self.base: list[str] = []
        self.delta: list[str] = []
        self.live_rows = 0
        self.bytes_per_entry = 0.0
        self.stats = {"manifest_bytes": 0, "manifests_written": 0, "entries_written": 0, "merges": 0}
        self.part_type = t["dt"]
        self._part_stats: dict[tuple[int, int], dict] = {}
        self.entry_file = _AvroFile(M.MANIFEST_ENTRY_SCHEMA, codec)
        self.list_file = _AvroFile(M.MANIFEST_FILE_META_SCHEMA, codec)
        self.datums: dict[tuple[int, int], bytes] = {}  # (kind, record) -> its Avro datum, encoded once
        self.list_datums: dict[str, bytes] = {}  # manifest name -> its manifest-list record's datum
        for d in ("schema", "snapshot", "manifest"):
            os.makedirs(os.path.join(path, d), exist_ok=True)
        self._put("schema/schema-0",
                  json.dumps(SC.schema_to_dict(_schema(pk=pk, buckets=buckets)), indent=2).encode())

    # -- files

    def _put(self, rel: str, data: bytes) -> None:
        with open(os.path.join(self.path, rel), "wb") as fh:
            fh.write(data)

    def _uuid(self, a: int, b: int) -> str:
        return f"{a & 0xFFFFFFFF:08x}-{(b >> 16) & 0xFFFF:04x}-4{b & 0xFFF:03x}-8{(a >> 32) & 0xFFF:03x}-{self.salt}"

    def new_file(self, snapshot: int, p: int, b: int, now: int) -> int:
        """A new level-0 data file in partition ``p``, bucket ``b``; its record index."""
        i = len(self.f_name)
        rows = 1000 + (i * 7919) % 4000
        key = i * 10_000
        name = f"data-{self._uuid(snapshot, p * self.buckets + b)}-{self.counter}.parquet"
        self.counter += 1
        d = self.dts[p]
        vmin = [key, f"n{key:012d}", -1.5 * (i % 1000), d]
        vmax = [key + rows - 1, f"n{key + rows - 1:012d}", 1.5 * (i % 1000), d]
        st = self.BR.encode_stats(vmin, vmax, [0, i % 7, i % 3, 0], self.value_types)
        self._record(p, b, 0, name, rows, key, self.seq, now, 0, (st["_MIN_VALUES"], st["_MAX_VALUES"]))
        self.seq += rows
        return i

    def copy_file(self, src: int, *, level: int, new_name: bool, now: int, snapshot: int) -> int:
        """A compaction's output for ``src``: the same file one level up (upgrade) or a rewrite under a new name."""
        i = len(self.f_name)
        name = self.f_name[src]
        if new_name:
            name = f"data-{self._uuid(snapshot, 1 << 20 | src)}-{self.counter}.parquet"
            self.counter += 1
        self._record(self.f_part[src], self.f_bucket[src], level, name, self.f_rows[src], self.f_key[src], self.f_seq[src],
                     now, 1, self.f_vstats[src])
        return i

    def _record(self, p, b, level, name, rows, key, seq, now, source, vstats) -> None:
        self.f_part.append(p)
        self.f_bucket.append(b)
        self.f_level.append(level)
        self.f_name.append(name)
        self.f_rows.append(rows)
        self.f_key.append(key)
        self.f_seq.append(seq)
        self.f_time.append(now)
        self.f_source.append(source)
        self.f_vstats.append(vstats)
        if self.placeholders:
            d = os.path.join(self.path, f"dt={self.dts[p]}", f"bucket-{b}")
            os.makedirs(d, exist_ok=True)
            open(os.path.join(d, name), "wb").close()

    def identity(self, r: int) -> tuple:
        return (self.f_part[r], self.f_bucket[r], self.f_level[r], self.f_name[r])

    def entry_record(self, kind: int, r: int) -> dict:
        key, rows, seq = self.f_key[r], self.f_rows[r], self.f_seq[r]
        if self.pk:
            lo, hi = _key_row(key), _key_row(key + rows - 1)
            key_stats = {"_MIN_VALUES": lo, "_MAX_VALUES": hi, "_NULL_COUNTS": [0]}
        else:
            lo = hi = self.BR.EMPTY_ROW_SERIALIZED
            key_stats = self.empty_stats
        vmin, vmax = self.f_vstats[r]
        return {"_VERSION": 2, "_KIND": kind, "_PARTITION": self.part_rows[self.f_part[r]], "_BUCKET": self.f_bucket[r],
                "_TOTAL_BUCKETS": self.buckets, "_FILE": {
                    "_FILE_NAME": self.f_name[r], "_FILE_SIZE": 2_000 + 40 * rows, "_ROW_COUNT": rows,
                    "_MIN_KEY": lo, "_MAX_KEY": hi, "_KEY_STATS": key_stats,
                    "_VALUE_STATS": {"_MIN_VALUES": vmin, "_MAX_VALUES": vmax, "_NULL_COUNTS": [0, r % 7, r % 3, 0]},
                    "_MIN_SEQUENCE_NUMBER": seq, "_MAX_SEQUENCE_NUMBER": seq + rows - 1, "_SCHEMA_ID": 0,
                    "_LEVEL": self.f_level[r], "_EXTRA_FILES": [], "_CREATION_TIME": self.f_time[r], "_DELETE_ROW_COUNT": 0,
                    "_EMBEDDED_FILE_INDEX": None, "_FILE_SOURCE": self.f_source[r], "_VALUE_STATS_COLS": None,
                    "_EXTERNAL_PATH": None, "_FIRST_ROW_ID": None, "_WRITE_COLS": None, "_WRITE_COLS_SEQUENCES": None}}

    # -- manifests

    def write_manifest(self, entries: list[tuple[int, int]]) -> str:
        name = f"manifest-{self._uuid(0x5EED, 0)[:-12]}{self.salt}-{self.n_manifest}"
        self.n_manifest += 1
        cache = self.datums
        for e in entries:
            if e not in cache:
                cache[e] = self.entry_file.datum(self.entry_record(*e))
        raw = self.entry_file.container([cache[e] for e in entries])
        self._put(f"manifest/{name}", raw)
        self.manifests[name] = (entries, len(raw))
        self.list_datums[name] = self.list_file.datum(self.meta_record(name, entries, len(raw)))
        self.stats["manifest_bytes"] += len(raw)
        self.stats["manifests_written"] += 1
        self.stats["entries_written"] += len(entries)
        if entries:
            self.bytes_per_entry = len(raw) / len(entries)
        return name

    def meta_record(self, name: str, entries: list[tuple[int, int]], size: int) -> dict:
        ps = [self.f_part[r] for _k, r in entries]
        pst = self.part_stats(min(ps), max(ps)) if ps else self.empty_stats
        bs = [self.f_bucket[r] for _k, r in entries] or [0]
        ls = [self.f_level[r] for _k, r in entries] or [0]
        added = sum(1 for k, _r in entries if k == self.M.ADD)
        return {"_VERSION": 2, "_FILE_NAME": name, "_FILE_SIZE": size, "_NUM_ADDED_FILES": added,
                "_NUM_DELETED_FILES": len(entries) - added, "_PARTITION_STATS": pst, "_SCHEMA_ID": 0,
                "_MIN_BUCKET": min(bs), "_MAX_BUCKET": max(bs), "_MIN_LEVEL": min(ls), "_MAX_LEVEL": max(ls),
                "_MIN_ROW_ID": None, "_MAX_ROW_ID": None, "_TOTAL_BUCKETS": self.buckets, "_EXTRA_FILES": None}

    def part_stats(self, lo: int, hi: int) -> dict:
        if (lo, hi) not in self._part_stats:
            self._part_stats[lo, hi] = self.BR.encode_stats([self.dts[lo]], [self.dts[hi]], [0], [self.part_type])
        return self._part_stats[lo, hi]

    def write_list(self, names: list[str]) -> tuple[str, int]:
        name = f"manifest-list-{self._uuid(0x115, 0)[:-12]}{self.salt}-{self.n_list}"
        self.n_list += 1
        raw = self.list_file.container([self.list_datums[n] for n in names])
        self._put(f"manifest/{name}", raw)
        self.stats["manifest_bytes"] += len(raw)
        return name, len(raw)

    def _merge(self, candidates: list[str], out: list[str]) -> None:
        """Java ``mergeCandidates``: one candidate stays as it is; several are replayed by identity and rewritten,
        rolled at the target size (ADD + DELETE of one identity cancel; a DELETE without its ADD stays)."""
        if len(candidates) == 1:
            out.append(candidates[0])
            return
        self.stats["merges"] += 1
        state: dict[tuple, tuple[int, int]] = {}
        for name in candidates:
            for kind, r in self.manifests[name][0]:
                ident = self.identity(r)
                if kind == self.M.ADD:
                    state[ident] = (kind, r)
                elif ident in state:
                    del state[ident]
                else:
                    state[ident] = (kind, r)
        merged = list(state.values())
        per = max(1, int(self.target_bytes / max(self.bytes_per_entry, 1.0)))
        for i in range(0, len(merged), per):
            out.append(self.write_manifest(merged[i:i + per]))

    def minor_compaction(self, inputs: list[str]) -> list[str]:
        """Java ``ManifestFileMerger.tryMinorCompaction`` over the previous base + delta manifests."""
        out: list[str] = []
        candidates: list[str] = []
        total = 0
        for name in inputs:
            total += self.manifests[name][1]
            candidates.append(name)
            if total >= self.target_bytes:
                self._merge(candidates, out)
                candidates, total = [], 0
        if len(candidates) >= self.merge_min_count:
            self._merge(candidates, out)
        else:
            out.extend(candidates)
        return out

    # -- commits

    def commit(self, k: int, entries: list[tuple[int, int]], now: int, kind: str = "APPEND") -> None:
        """Snapshot ``k``: a delta manifest of ``entries``, the base list from the previous snapshot's lists."""
        from reference_impl.paimon import snapshot as SN

        base = self.minor_compaction(self.base + self.delta)
        delta = [self.write_manifest(entries)]
        if k == 1:  # the fast container writer against encode_avro, once per build
            name = delta[0]
            if not (self.entry_file.same_as_encode_avro([self.entry_record(*e) for e in entries]) and
                    self.list_file.same_as_encode_avro([self.meta_record(name, entries, self.manifests[name][1])])):
                raise AssertionError("the benchmark's Avro container writer differs from manifests.encode_avro")
        base_list, base_size = self.write_list(base)
        delta_list, delta_size = self.write_list(delta)
        delta_rows = sum(self.f_rows[r] * (1 if kind_ == self.M.ADD else -1) for kind_, r in entries)
        self.live_rows += delta_rows
        snap = SN.Snapshot(id=k, schema_id=0, base_manifest_list=base_list, base_manifest_list_size=base_size,
                           delta_manifest_list=delta_list, delta_manifest_list_size=delta_size, commit_user=COMMIT_USER,
                           commit_identifier=k, commit_kind=kind, time_millis=now, total_record_count=self.live_rows,
                           delta_record_count=delta_rows, changelog_record_count=0)
        self._put(f"snapshot/snapshot-{k}", json.dumps(SN.snapshot_to_dict(snap), indent=2).encode())
        self.base, self.delta = base, delta
        # drop manifests no longer referenced (their entries are kept only in merged files)
        keep = set(base) | set(delta)
        for name in [n for n in self.manifests if n not in keep]:
            del self.manifests[name]
            del self.list_datums[name]

    def finish(self, latest: int) -> None:
        self._put("snapshot/EARLIEST", b"1")
        self._put("snapshot/LATEST", str(latest).encode())


def build_table(path: str, *, snapshots: int = 1_000, files_per_snapshot: int = 100, buckets: int = 4, partitions: int = 16,
                pk: bool = True, placeholders: bool = False, target_manifest_bytes: int = TARGET_MANIFEST_BYTES,
                merge_min_count: int = MERGE_MIN_COUNT, codec: str = CODEC) -> dict:
    """Write the benchmark table at ``path`` (see the module docstring); returns what was built (counts, sizes, seconds).

    ``placeholders``: also create an empty file at each data file's path (for the validator's existence
    check on small tables; the files are not Parquet and nothing reads them).
    """
    t0 = time.perf_counter()
    b = _Builder(path, buckets=buckets, partitions=partitions, pk=pk, placeholders=placeholders,
                 target_bytes=target_manifest_bytes, merge_min_count=merge_min_count, codec=codec)
    combos = partitions * buckets
    added: dict[int, list[int]] = {}
    replaced = 0
    for k in range(1, snapshots + 1):
        now = _T0_MS + k * 60_000
        new = []
        for i in range(files_per_snapshot):
            c = ((k - 1) * files_per_snapshot + i) % combos
            new.append(b.new_file(k, c // buckets, c % buckets, now))
        added[k] = new
        entries: list[tuple[int, int]] = []
        if k % 10 == 0 and k > 5:
            victims = added.get(k - 5, [])[:max(1, files_per_snapshot // 10)]
            for j, r in enumerate(victims):
                upgrade = pk and j % 2 == 0
                out = b.copy_file(r, level=MAX_LEVEL if upgrade else (REWRITE_LEVEL if pk else 0), new_name=not upgrade,
                                  now=now, snapshot=k)
                entries += [(b.M.DELETE, r), (b.M.ADD, out)]
                replaced += 1
        entries += [(b.M.ADD, r) for r in new]
        b.commit(k, entries, now)
        added.pop(k - 6, None)
        if snapshots >= 10 and k % max(1, snapshots // 10) == 0:
            _say(f"  built {k}/{snapshots} snapshots ({time.perf_counter() - t0:.1f}s)")
    b.finish(snapshots)
    return {"snapshots": snapshots, "files_per_snapshot": files_per_snapshot, "buckets": buckets, "partitions": partitions,
            "pk": pk, "live_files": snapshots * files_per_snapshot, "replaced_files": replaced,
            "base_manifests": len(b.base), "manifest_bytes": b.stats["manifest_bytes"],
            "manifests_written": b.stats["manifests_written"], "entries_written": b.stats["entries_written"],
            "manifest_merges": b.stats["merges"], "live_rows": b.live_rows, "codec": codec,
            "build_seconds": round(time.perf_counter() - t0, 2)}


def build_history(path: str, snapshots: int, *, placeholders: bool = False) -> dict:
    """A table of ``snapshots`` snapshots for the validation benchmark: each replaces the previous one's
    single data file (DELETE + ADD in one OVERWRITE commit), so the live set stays one file and the
    history, with Java's manifest merging keeping every base list short, grows linearly: validation time
    per snapshot says whether the validator is linear. Data files do not exist unless ``placeholders``."""
    t0 = time.perf_counter()
    b = _Builder(path, buckets=1, partitions=1, pk=True, placeholders=placeholders, target_bytes=TARGET_MANIFEST_BYTES,
                 merge_min_count=MERGE_MIN_COUNT, codec=CODEC)
    previous = None
    for k in range(1, snapshots + 1):
        now = _T0_MS + k * 60_000
        r = b.new_file(k, 0, 0, now)
        entries = ([] if previous is None else [(b.M.DELETE, previous)]) + [(b.M.ADD, r)]
        b.commit(k, entries, now, kind="APPEND" if previous is None else "OVERWRITE")
        previous = r
        if snapshots >= 10 and k % max(1, snapshots // 10) == 0:
            _say(f"  built {k}/{snapshots} snapshots ({time.perf_counter() - t0:.1f}s)")
    b.finish(snapshots)
    return {"snapshots": snapshots, "base_manifests": len(b.base), "manifest_merges": b.stats["merges"],
            "build_seconds": round(time.perf_counter() - t0, 2)}


def run_validation(sizes: Sequence[int], workdir: str | None = None) -> list[dict]:
    """The reference validator on histories of each size (snapshots), each in a fresh process."""
    out = []
    if workdir:
        os.makedirs(workdir, exist_ok=True)
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="lakeconf-paimon-history-", dir=workdir) as d:
            path = os.path.join(d, "table")
            _say(f"building a {n:,}-snapshot Paimon table")
            built = build_history(path, n, placeholders=True)
            figures = validation_in_child("paimon", path)
            out.append({"snapshots": n, **built, **figures})
            print(validation_line(f"paimon, {n:,} snapshots", figures), flush=True)
    return out


# --------------------------------------------------------------------------------------------
# Measuring (each call runs in its own subprocess)
# --------------------------------------------------------------------------------------------


def _digest(plan: list[tuple[str, int, str]]) -> str:
    h = hashlib.sha256()
    for part, bucket, name in sorted(plan):
        h.update(f"{part}\x00{bucket}\x00{name}\n".encode())
    return h.hexdigest()[:16]


def _plan_reference(path: str) -> tuple[list, Any]:
    from reference_impl.paimon import manifests as M
    from reference_impl.paimon import schema as SC
    from reference_impl.paimon import snapshot as SN
    from reference_impl.paimon.table import visible
    from reference_impl.storage import LocalStorage

    storage = LocalStorage(path)
    snap = SN.latest_snapshot(storage)
    schema = SC.load_schema(storage, snap.schema_id)
    return visible(M.live_files(storage, snap), schema), schema


def _open_pypaimon(path: str):
    from pypaimon import CatalogFactory

    table_dir = os.path.abspath(path)
    db_dir = os.path.dirname(table_dir)
    catalog = CatalogFactory.create({"warehouse": os.path.dirname(db_dir)})
    return catalog.get_table(f"{os.path.basename(db_dir)[:-3]}.{os.path.basename(table_dir)}")


def _plan_pypaimon(path: str) -> list:
    table = _open_pypaimon(path)
    return table.new_read_builder().new_scan().plan().splits()


def _as_triples(engine: str, out: Any) -> list[tuple[str, int, str]]:
    """(partition values, bucket, file name) per planned file, whichever engine planned them."""
    if engine == "reference":
        from reference_impl.paimon import binary_row as BR

        entries, schema = out
        types = [schema.get_field(k).type for k in schema.partition_keys]
        parts: dict[bytes, str] = {}
        res = []
        for e in entries:
            if e.partition not in parts:
                parts[e.partition] = repr(tuple(BR.deserialize_with_arity(e.partition, types)[0]))
            res.append((parts[e.partition], e.bucket, e.file.file_name))
        return res
    return [(repr(tuple(s.partition.values)), s.bucket, f.file_name) for s in out for f in s.files]


def _preload(*modules: str) -> None:
    """Import ``modules`` before the clock starts (imports are not what is measured)."""
    import importlib

    for m in modules:
        importlib.import_module(m)


def _measure(engine: str, path: str) -> dict:
    """One timed plan in this process (imports done first and not timed)."""
    if engine == "reference":
        _preload("reference_impl.paimon.manifests", "reference_impl.paimon.table")
        fn = _plan_reference
    else:
        _preload("pypaimon", "pypaimon.read.scanner.file_scanner", "pypaimon.catalog.catalog_factory")
        fn = _plan_pypaimon
    out, seconds, cpu, baseline = timed(lambda: fn(path))
    plan = _as_triples(engine, out)
    return {"engine": engine, "seconds": seconds, "cpu_seconds": cpu, "files": len(plan), "distinct": len(set(plan)),
            "splits": len(out) if engine != "reference" else None, "digest": _digest(plan),
            "maxrss_mb": round(_maxrss_mb(), 1), "baseline_rss_mb": round(baseline, 1)}


def _child(engine: str, path: str, *, profile: bool = False) -> dict:
    return measure_in_child(MODULE, engine, path, profile=profile)


def _profile_reference(path: str) -> str:
    _preload("reference_impl.paimon.manifests", "reference_impl.paimon.table")  # before profiling starts
    return profile_call(_plan_reference, path)


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------


def _prepare(root: str, wanted: dict, reuse: bool, own: bool) -> tuple[str, dict]:
    path = table_path(root)
    stamp = os.path.join(root, "bench_paimon.built.json")
    if reuse and os.path.exists(stamp) and os.path.isdir(path):
        with open(stamp, encoding="utf-8") as fh:
            old = json.load(fh)
        if all(old.get(k) == v for k, v in wanted.items()):
            _say(f"reusing the table built earlier at {path}")
            return path, old
    if os.path.exists(path):
        shutil.rmtree(path)
    _say(f"building {wanted['snapshots']} snapshots x {wanted['files_per_snapshot']} files over {wanted['partitions']} partitions "
         f"x {wanted['buckets']} buckets at {path}")
    built = build_table(path, **wanted)
    if not own:
        with open(stamp, "w", encoding="utf-8") as fh:
            json.dump(built, fh)
    return path, built


def run_paimon(snapshots: int = 1_000, files: int = 100, buckets: int = 4, partitions: int = 16, repeat: int = 3,
               workdir: str | None = None, *, pk: bool = True, keep: bool = False, target: float = TARGET_RATIO,
               profile: bool = True, reuse: bool = False) -> dict:
    """Build the table, time both engines' scan planning ``repeat`` times each, return the figures."""
    own = workdir is None
    root = tempfile.mkdtemp(prefix="lakeconf-bench-") if own else workdir
    os.makedirs(root, exist_ok=True)
    wanted = {"snapshots": snapshots, "files_per_snapshot": files, "buckets": buckets, "partitions": partitions, "pk": pk}
    path, built = _prepare(root, wanted, reuse, own)
    load_before = _loadavg()
    runs = interleaved(("reference", "pypaimon"), repeat, lambda engine: _child(engine, path),
                       lambda r: f"{r['seconds']:.3f}s wall, {r['cpu_seconds']:.3f}s CPU, {r['files']} files, "
                                 f"peak {r['maxrss_mb']} MB")
    result: dict[str, Any] = {"table": path, "built": built, "repeat": repeat, "data_files_exist": False,
                              "target_ratio": target, "findings": [], "load_average": load_before, "cpus": os.cpu_count()}
    for engine, rs in runs.items():
        result[engine] = aggregate(rs, keep=("files", "distinct", "digest", "splits"))
        if "error" in result[engine]:
            result["findings"].append(f"{engine} failed to plan the scan: {result[engine]['error'][-500:]}")
    ref, py = result.get("reference", {}), result.get("pypaimon", {})
    result.update(ratios(ref, py))
    if "median_seconds" in ref and "median_seconds" in py:
        if (ref["files"], ref["digest"]) != (py["files"], py["digest"]):
            result["findings"].append(f"plans disagree: reference {ref['files']} files (digest {ref['digest']}), "
                                      f"pypaimon {py['files']} files (digest {py['digest']})")
        if ref["files"] != built["live_files"] or ref["distinct"] != ref["files"]:
            result["findings"].append(f"reference plans {ref['files']} files ({ref['distinct']} distinct), the builder left "
                                      f"{built['live_files']} live")
        if profile and result["ratio"] is not None and result["ratio"] > target:
            _say(f"reference is {result['ratio']}x pypaimon (target {target}x): profiling one reference plan")
            prof = _child("reference", path, profile=True)
            result["profile"] = prof.get("profile") or prof.get("error", "")
    if own and not keep:
        shutil.rmtree(root, ignore_errors=True)
        result["table"] += " (deleted)"
    return result


def summary(result: dict) -> str:
    """A printable summary of ``run_paimon``'s result."""
    b = result["built"]
    lines = [
        "Paimon scan planning: reference live_files + visible vs pypaimon new_scan().plan().splits()",
        f"  table: {'primary-key' if b['pk'] else 'append'}, {b['snapshots']} snapshots x {b['files_per_snapshot']} files over "
        f"{b['partitions']} partitions x {b['buckets']} buckets = {b['live_files']} live files ({b['replaced_files']} replaced "
        f"by DELETE + ADD); latest base list {b['base_manifests']} manifests after {b['manifest_merges']} manifest merges; "
        f"{b['manifests_written']} manifests ({b['entries_written']} entries) and lists, {b['manifest_bytes'] / 1e6:.1f} MB "
        f"({b['codec']}), built in {b['build_seconds']}s",
        "  data files do not exist: planning reads the snapshot, schema, manifest lists and manifests only",
        f"  each plan in a fresh subprocess, {result['repeat']} runs per engine, interleaved (first engine alternating); "
        f"{result.get('cpus')} CPUs, load average {result.get('load_average')} when timing began",
    ]
    for engine in ("reference", "pypaimon"):
        r = result.get(engine, {})
        if r:
            extra = "" if "error" in r else f", {r['files']} files" + (f" in {r['splits']} splits" if r.get("splits") else "")
            lines.append(engine_line(engine, r, extra))
    lines += verdict_lines(result, "pypaimon", agree="both engines plan the same (partition, bucket, file) set", work="plan")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Scaling: several sizes, the growth exponent
# --------------------------------------------------------------------------------------------


def run_scale(totals: Sequence[int], files: int = 100, buckets: int = 4, partitions: int = 16, repeat: int = 3,
              workdir: str | None = None, *, pk: bool = True) -> dict:
    """``run_paimon`` at each total file count (snapshots = total / files per snapshot), then the fitted
    growth exponent of median wall time, CPU time and peak RSS above the post-import baseline, per engine."""

    def run_at(total: int) -> tuple[int, dict, dict]:
        snaps = max(1, total // files)
        _say(f"  {snaps} snapshots x {files} files")
        wd = os.path.join(workdir, f"scale-{total}") if workdir else None
        r = run_paimon(snaps, files, buckets, partitions, repeat, wd, pk=pk, profile=False, reuse=wd is not None)
        return snaps * files, r, {}

    return scaled(totals, run_at, ("reference", "pypaimon"), "files")


def scale_summary(out: dict) -> str:
    return shared_scale_summary(out, "Paimon scan planning", agree="both engines plan the same files")


# --------------------------------------------------------------------------------------------
# Merge read: a small primary-key table with real Parquet files, read fully by both engines
# --------------------------------------------------------------------------------------------


def build_merge_table(path: str, *, commits: int = 20, rows_per_commit: int = 5_000, keys: int = 20_000, buckets: int = 4,
                      partitions: int = 4) -> dict:
    """A primary-key table (deduplicate) written by the reference writer: ``commits`` APPEND commits of
    ``rows_per_commit`` upserts drawn over ``keys`` keys, so most keys have several versions to merge."""
    import pyarrow as pa

    from reference_impl.paimon import writer as W
    from reference_impl.storage import LocalStorage

    t0 = time.perf_counter()
    os.makedirs(path, exist_ok=True)
    storage = LocalStorage(path)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                        pa.field("value", pa.float64()), pa.field("dt", pa.string(), nullable=False)])
    W.create_table(storage, schema, partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": str(buckets)})
    for c in range(commits):
        ids = [(c * 7_919 + i * 104_729) % keys for i in range(rows_per_commit)]
        seen: dict[int, int] = {}
        for j, k in enumerate(ids):
            seen[k] = j  # one row per key in a commit (the last)
        ks = sorted(seen)
        rows = pa.table({"id": pa.array(ks, pa.int64()), "name": [f"v{c}-{k}" for k in ks],
                         "value": [float(c * 1_000_000 + k) for k in ks],
                         "dt": [f"2026-01-{1 + k % partitions:02d}" for k in ks]}, schema=schema)
        W.write(storage, rows)
    return {"commits": commits, "rows_per_commit": rows_per_commit, "keys": keys, "buckets": buckets, "partitions": partitions,
            "build_seconds": round(time.perf_counter() - t0, 2)}


def _read_reference(path: str):
    from reference_impl.paimon.table import read_table

    return read_table(path)


def _read_pypaimon(path: str):
    table = _open_pypaimon(path)
    rb = table.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


def _rows_digest(t) -> tuple[int, str]:
    cols = ["id", "name", "value", "dt"]
    t = t.select(cols).sort_by([("dt", "ascending"), ("id", "ascending")])
    h = hashlib.sha256()
    for row in zip(*(t.column(c).to_pylist() for c in cols)):
        h.update(repr(row).encode() + b"\n")
    return t.num_rows, h.hexdigest()[:16]


def _measure_read(engine: str, path: str) -> dict:
    if engine == "reference":
        _preload("reference_impl.paimon.table")
        fn = _read_reference
    else:
        _preload("pypaimon", "pypaimon.read.table_read", "pypaimon.catalog.catalog_factory")
        fn = _read_pypaimon
    t, seconds, cpu, baseline = timed(lambda: fn(path))
    n, digest = _rows_digest(t)
    return {"engine": engine, "seconds": seconds, "cpu_seconds": cpu, "rows": n, "digest": digest,
            "maxrss_mb": round(_maxrss_mb(), 1), "baseline_rss_mb": round(baseline, 1)}


def run_merge_read(commits: int = 20, rows_per_commit: int = 5_000, keys: int = 20_000, repeat: int = 3,
                   workdir: str | None = None, *, keep: bool = False) -> dict:
    """Build the merge table, time both engines' full reads ``repeat`` times each (fresh subprocesses), compare rows."""
    own = workdir is None
    root = tempfile.mkdtemp(prefix="lakeconf-bench-") if own else workdir
    path = os.path.join(root, "warehouse", f"{DATABASE}.db", "merge_read")
    if os.path.exists(path):
        shutil.rmtree(path)
    _say(f"writing a primary-key table of {commits} commits x {rows_per_commit} upserts over {keys} keys at {path}")
    built = build_merge_table(path, commits=commits, rows_per_commit=rows_per_commit, keys=keys)
    load_before = _loadavg()
    runs = interleaved(("reference", "pypaimon"), repeat, lambda engine: _child("read-" + engine, path),
                       lambda r: f"{r['seconds']:.3f}s wall, {r['cpu_seconds']:.3f}s CPU, {r['rows']} rows, peak {r['maxrss_mb']} MB")
    result: dict[str, Any] = {"table": path, "built": built, "repeat": repeat, "findings": [], "load_average": load_before,
                              "cpus": os.cpu_count(), "target_ratio": TARGET_RATIO}
    for engine, rs in runs.items():
        result[engine] = aggregate(rs, keep=("rows", "digest"))
        if "error" in result[engine]:
            result["findings"].append(f"{engine} failed to read the table: {result[engine]['error'][-500:]}")
    ref, py = result.get("reference", {}), result.get("pypaimon", {})
    result.update(ratios(ref, py))
    if "rows" in ref and "rows" in py and (ref["rows"], ref["digest"]) != (py["rows"], py["digest"]):
        result["findings"].append(f"rows disagree: reference {ref['rows']} rows (digest {ref['digest']}), "
                                  f"pypaimon {py['rows']} rows (digest {py['digest']})")
    if own and not keep:
        shutil.rmtree(root, ignore_errors=True)
        result["table"] += " (deleted)"
    return result


def merge_summary(result: dict) -> str:
    b = result["built"]
    lines = [
        "Paimon merge read: reference read_table vs pypaimon to_arrow, primary-key table (deduplicate), real Parquet files",
        f"  table: {b['commits']} commits x {b['rows_per_commit']} upserts over {b['keys']} keys, {b['partitions']} partitions x "
        f"{b['buckets']} buckets, written by the reference writer in {b['build_seconds']}s",
        f"  each read in a fresh subprocess, {result['repeat']} runs per engine, interleaved; {result.get('cpus')} CPUs, "
        f"load average {result.get('load_average')} when timing began",
    ]
    for engine in ("reference", "pypaimon"):
        r = result.get(engine, {})
        if r:
            lines.append(engine_line(engine, r, "" if "error" in r else f", {r['rows']} rows"))
    lines += verdict_lines(result, "pypaimon", agree="both engines read the same rows", work="read")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------



def _parse(argv: list[str]):
    import argparse

    p = argparse.ArgumentParser(prog="lakeconf bench paimon", description="Paimon scan planning: reference vs pypaimon.")
    p.add_argument("--snapshots", type=int, default=1_000, help="snapshots (APPEND commits; default 1000)")
    p.add_argument("--files", type=int, default=100, help="data files added per snapshot (default 100)")
    p.add_argument("--buckets", type=int, default=4, help="fixed buckets (default 4)")
    p.add_argument("--partitions", type=int, default=16, help="partitions (default 16)")
    p.add_argument("--append", action="store_true", help="an append table (bucket-key=id) instead of a primary-key table")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per engine (default 3)")
    p.add_argument("--workdir", default=None, help="where to build the table (kept); default: a temporary directory")
    p.add_argument("--reuse", action="store_true", help="with --workdir: reuse a table built there with the same sizes")
    p.add_argument("--target", type=float, default=TARGET_RATIO, help="profile the reference when slower than this ratio")
    p.add_argument("--no-profile", action="store_true", help="do not profile the reference when over the target")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--scale", default=None, metavar="N[,N...]",
                   help="instead: run at each total file count (snapshots = N / --files) and fit the growth exponent")
    p.add_argument("--validate", default=None, metavar="N[,N...]",
                   help="instead: time the reference validator on histories of N snapshots each (e.g. 1000,10000)")
    p.add_argument("--merge-read", action="store_true",
                   help="instead: read a primary-key table with real Parquet files fully, reference vs pypaimon to_arrow")
    p.add_argument("--merge-commits", type=int, default=20, help="with --merge-read: commits (default 20)")
    p.add_argument("--merge-rows", type=int, default=5_000, help="with --merge-read: upserts per commit (default 5000)")
    p.add_argument("--merge-keys", type=int, default=20_000, help="with --merge-read: distinct keys (default 20000)")
    return p.parse_args([a for a in argv if a != "--"])


def main(argv: list[str] | None = None) -> int:
    """``lakeconf bench paimon [options]``: exit 1 when the engines disagree (a finding), else 0."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "_measure":  # internal: one timed plan (or read) in this (child) process
        engine, path = argv[1], argv[2]
        if "--profile" in argv:
            print(_profile_reference(path))
        print(json.dumps(_measure_read(engine[5:], path) if engine.startswith("read-") else _measure(engine, path)))
        return 0
    args = _parse(argv)
    if args.validate:
        vres = run_validation(parse_sizes(args.validate), args.workdir)
        if args.json:
            print(json.dumps(vres, indent=1))
        return 1 if any("error" in r or r.get("violations") for r in vres) else 0
    if args.merge_read:
        mres = run_merge_read(args.merge_commits, args.merge_rows, args.merge_keys, args.repeat, args.workdir)
        print(json.dumps(mres, indent=1) if args.json else merge_summary(mres))
        return 1 if mres["findings"] else 0
    if args.scale:
        sres = run_scale(parse_sizes(args.scale), args.files, args.buckets, args.partitions, args.repeat, args.workdir, pk=not args.append)
        print(json.dumps(sres, indent=1) if args.json else scale_summary(sres))
        return 1 if sres["findings"] else 0
    result = run_paimon(args.snapshots, args.files, args.buckets, args.partitions, args.repeat, args.workdir, pk=not args.append,
                        target=args.target, profile=not args.no_profile, reuse=args.reuse)
    print(json.dumps(result, indent=1) if args.json else summary(result))
    return 1 if result["findings"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
