"""Checks of the Avro metadata: manifest lists, data manifests, index manifests, and the files they name."""

from __future__ import annotations

from typing import Iterator

from reference_impl.common.validation import Violation
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon import binary_row as BR
from reference_impl.paimon import datafiles as DF
from reference_impl.paimon import deletion_vectors as DV
from reference_impl.paimon import layout as L
from reference_impl.paimon import manifests as M
from reference_impl.paimon import table as TB
from reference_impl.paimon.validate.context import Context
from reference_impl.paimon.validate.registry import V, at, check


def _mrel(name: str) -> str:
    return f"{L.MANIFEST_DIR}/{name}"


def _safe(name: object) -> bool:
    try:
        L.bare_name(name, what="file", rule="PAIMON-MLIST-005")
        return True
    except InvalidTable:
        return False


@check("LAYOUT-004", "LAYOUT-006")
def snapshot_files_exist(ctx: Context) -> Iterator[Violation]:
    """Every manifest list and index manifest a snapshot or tag names exists in ``manifest/``."""
    for rel, s in ctx.sources():
        for key, name in (("baseManifestList", s.base_manifest_list), ("deltaManifestList", s.delta_manifest_list),
                          ("changelogManifestList", s.changelog_manifest_list)):
            if name is not None and _safe(name) and _mrel(name) in ctx.missing:
                yield V("LAYOUT-004", f"{key} {name} does not exist in manifest/", at(rel, key))
        if s.index_manifest is not None and _safe(s.index_manifest) and _mrel(s.index_manifest) in ctx.missing:
            yield V("LAYOUT-006", f"indexManifest {s.index_manifest} does not exist in manifest/", at(rel, "indexManifest"))


@check("LAYOUT-004", "LAYOUT-005", "LAYOUT-006")
def manifest_names(ctx: Context) -> Iterator[Violation]:
    """Manifest lists are ``manifest-list-<uuid>-<n>``, manifests ``manifest-<uuid>-<n>``, index manifests
    ``index-manifest-<uuid>-<n>``."""
    seen: set[tuple[str, str]] = set()
    for rel, s in ctx.sources():
        named = [("manifest-list", n) for n in (s.base_manifest_list, s.delta_manifest_list, s.changelog_manifest_list)
                 if n is not None]
        if s.index_manifest is not None:
            named.append(("index-manifest", s.index_manifest))
        for kind, name in named:
            if (kind, name) not in seen and _safe(name) and not L.name_matches(kind, name):
                seen.add((kind, name))
                yield V(L.NAME_RULES[kind], f"{name} is not named {kind}-<uuid>-<n>", _mrel(name))
    for lst, metas in sorted(ctx.manifest_lists.items()):
        for m in metas:
            if ("manifest", m.file_name) not in seen and _safe(m.file_name) and not L.name_matches("manifest", m.file_name):
                seen.add(("manifest", m.file_name))
                yield V("LAYOUT-005", f"{m.file_name} is not named manifest-<uuid>-<n>", at(_mrel(lst), m.file_name))


@check("MLIST-005", "MLIST-006", "MLIST-007")
def manifest_list_records(ctx: Context) -> Iterator[Violation]:
    """Each manifest-list record names an existing manifest of ``_FILE_SIZE`` bytes holding
    ``_NUM_ADDED_FILES`` ADD and ``_NUM_DELETED_FILES`` DELETE entries."""
    for lst, metas in sorted(ctx.manifest_lists.items()):
        where_list = _mrel(lst)
        for m in metas:
            rel = _mrel(m.file_name)
            if not _safe(m.file_name):
                continue
            if rel in ctx.missing:
                yield V("MLIST-005", f"manifest {m.file_name} does not exist in manifest/", at(where_list, m.file_name))
                continue
            size = ctx.sizes.get(rel)
            if size is not None and size != m.file_size:
                yield V("MLIST-006", f"_FILE_SIZE of {m.file_name} is {m.file_size}, the file has {size} bytes",
                        at(where_list, m.file_name))
            entries = ctx.manifests.get(m.file_name)
            if entries is not None:
                yield from M.check_manifest_counts(m, entries, at(where_list, m.file_name))


def _replay(ctx: Context, s) -> tuple[list[M.ManifestEntry] | None, Violation | None]:
    """The live ADD entries of a snapshot (None when a manifest of it is unreadable), or the replay's violation."""
    state: dict = {}
    for lst in (s.base_manifest_list, s.delta_manifest_list):
        if lst not in ctx.manifest_lists:
            return None, None
        for m in ctx.manifest_lists[lst]:
            if m.file_name not in ctx.manifests:
                return None, None
            try:
                M.merge_entries(ctx.manifests[m.file_name], state)
            except InvalidTable as exc:
                return None, Violation(exc.rule or "PAIMON-MANIFEST-012", f"{exc.message} (in {m.file_name})", "")
    orphans = [e for e in state.values() if e.kind == M.DELETE]
    if orphans:
        names = ", ".join(e.file.file_name for e in orphans[:3])
        return None, Violation("PAIMON-MANIFEST-011", f"deletes {len(orphans)} file(s) no manifest of the snapshot adds: {names}", "")
    return list(state.values()), None


def _live(ctx: Context) -> list[tuple[str, object, list[M.ManifestEntry]]]:
    cache = getattr(ctx, "_live_cache", None)
    if cache is None:
        cache = []
        for rel, s in ctx.sources():
            live, _ = _replay(ctx, s)
            if live is not None:
                cache.append((rel, s, live))
        ctx._live_cache = cache  # type: ignore[attr-defined]
    return cache


@check("MANIFEST-011", "MANIFEST-012")
def replay(ctx: Context) -> Iterator[Violation]:
    """Base + delta replay of every snapshot and tag: no second ADD of a live file, no DELETE without its ADD."""
    for rel, s in ctx.sources():
        _, v = _replay(ctx, s)
        if v is not None:
            yield V(v.rule, v.message, rel)


@check("SNAP-015")
def total_record_count(ctx: Context) -> Iterator[Violation]:
    """``totalRecordCount`` is the row count of all live data files."""
    for rel, s, live in _live(ctx):
        if s.total_record_count is not None:
            total = sum(e.file.row_count for e in live)
            if total != s.total_record_count:
                yield V("SNAP-015", f"totalRecordCount is {s.total_record_count}, the live files hold {total} rows",
                        at(rel, "totalRecordCount"))


def _all_entries(ctx: Context) -> Iterator[tuple[str, M.ManifestEntry]]:
    for name, entries in sorted(ctx.manifests.items()):
        for i, e in enumerate(entries):
            yield at(_mrel(name), f"entry {i} ({e.file.file_name})"), e


@check("PART-006")
def partition_arity(ctx: Context) -> Iterator[Violation]:
    """``_PARTITION`` has one field per partition key, of the partition columns' types."""
    schema = ctx.table_schema
    if schema is None:
        return
    fields = [schema.get_field(k) for k in schema.partition_keys]
    if any(f is None for f in fields):
        return  # a partition key that is no field: the schema check reports it
    types = [f.type for f in fields]
    for where, e in _all_entries(ctx):
        try:
            BR.deserialize_with_arity(e.partition, types)
        except (InvalidTable, Unsupported) as exc:
            yield V("PART-006", f"_PARTITION does not hold the {len(types)} partition key(s) "
                                f"{list(schema.partition_keys)}: {exc.message}", where)


@check("MANIFEST-007", "BUCKET-006")
def buckets(ctx: Context) -> Iterator[Violation]:
    """``_BUCKET`` lies within ``_TOTAL_BUCKETS`` for fixed-bucket files; bucket-unaware append tables use bucket 0."""
    for where, e in _all_entries(ctx):
        schema = ctx.schema_for(e.file.schema_id)
        if e.total_buckets > 0 and not 0 <= e.bucket < e.total_buckets:
            yield V("MANIFEST-007", f"_BUCKET {e.bucket} is outside 0..{e.total_buckets - 1} (_TOTAL_BUCKETS {e.total_buckets})", where)
        elif e.bucket < 0 and e.bucket != L.POSTPONE_BUCKET:
            yield V("MANIFEST-007", f"_BUCKET {e.bucket} is negative (only the postpone bucket -2 is)", where)
        elif (schema is not None and not schema.is_primary_key_table and schema.bucket == -1 and e.bucket != 0):
            yield V("BUCKET-006", f"bucket-unaware append table file in bucket {e.bucket}, not 0", where)


@check("MANIFEST-016", "MANIFEST-020", "MANIFEST-022", "MANIFEST-025")
def file_meta(ctx: Context) -> Iterator[Violation]:
    """Row counts not negative, min sequence <= max sequence, level >= 0 (0 for append tables),
    ``_DELETE_ROW_COUNT`` within ``_ROW_COUNT``."""
    for where, e in _all_entries(ctx):
        f = e.file
        if f.row_count < 0:
            yield V("MANIFEST-016", f"_ROW_COUNT {f.row_count} is negative", where)
        if f.min_sequence_number > f.max_sequence_number:
            yield V("MANIFEST-020", f"_MIN_SEQUENCE_NUMBER {f.min_sequence_number} > _MAX_SEQUENCE_NUMBER "
                                    f"{f.max_sequence_number}", where)
        schema = ctx.schema_for(f.schema_id)
        if f.level < 0:
            yield V("MANIFEST-022", f"_LEVEL {f.level} is negative", where)
        elif schema is not None and not schema.is_primary_key_table and f.level != 0:
            yield V("MANIFEST-022", f"append table file at _LEVEL {f.level}: append files are level 0", where)
        if f.delete_row_count is not None and not 0 <= f.delete_row_count <= max(f.row_count, 0):
            yield V("MANIFEST-025", f"_DELETE_ROW_COUNT {f.delete_row_count} is not within 0.._ROW_COUNT ({f.row_count})", where)


@check("LAYOUT-010", "LAYOUT-011")
def data_files_exist(ctx: Context) -> Iterator[Violation]:
    """Every live data file of every snapshot and tag exists where its entry puts it."""
    schema = ctx.table_schema
    if schema is None:
        return
    fields = [schema.get_field(k) for k in schema.partition_keys]
    if any(f is None for f in fields):
        return
    data_dir = schema.options.get("data-file.path-directory")
    done: set[tuple] = set()
    for rel, _s, live in _live(ctx):
        for e in live:
            key = (e.partition, e.bucket, e.file.file_name, e.file.external_path)
            if key in done:
                continue
            done.add(key)
            try:
                values, _ = BR.deserialize_with_arity(e.partition, [f.type for f in fields])
                path = DF.data_file_path(e.file.file_name, bucket=e.bucket, storage=ctx.storage, data_dir=data_dir,
                                         partition_path=TB.partition_path(values, fields, schema),
                                         external_path=e.file.external_path)
            except (InvalidTable, Unsupported) as exc:
                if exc.rule in ("PAIMON-LAYOUT-010", "PAIMON-LAYOUT-011"):
                    yield V(exc.rule, exc.message, at(rel, e.file.file_name))
                continue  # an undecodable partition: partition_arity reports it
            if not ctx.storage.exists(path):
                rule = "LAYOUT-011" if e.file.external_path is not None else "LAYOUT-010"
                yield V(rule, f"live data file {e.file.file_name} does not exist at {path}", at(rel, e.file.file_name))


# ---------------------------------------------------------------- index manifests and index files


def _index_sources(ctx: Context) -> Iterator[tuple[str, str, list[M.IndexManifestEntry]]]:
    seen = set()
    for rel, s in ctx.sources():
        if s.index_manifest in ctx.index_manifests and s.index_manifest not in seen:
            seen.add(s.index_manifest)
            yield rel, s.index_manifest, ctx.index_manifests[s.index_manifest]


@check("SNAP-011", "IDXMAN-007")
def index_manifest_entries(ctx: Context) -> Iterator[Violation]:
    """An index manifest is the complete list of live index files: ADD entries only, each file once."""
    for _rel, name, entries in _index_sources(ctx):
        where = _mrel(name)
        yield from M.check_index_manifest_kinds(entries, where)
        seen = set()
        for e in entries:
            if e.kind == M.ADD:
                if e.identifier in seen:
                    yield V("IDXMAN-007", f"index file {e.index_file.file_name} is added twice", where)
                seen.add(e.identifier)


@check("LAYOUT-007", "INDEX-001", "IDXMAN-005")
def index_files(ctx: Context) -> Iterator[Violation]:
    """Index files exist in ``index/`` named ``index-<uuid>-<n>``; a HASH file is whole 4-byte hashes, as many as
    its ``_ROW_COUNT``; a DV entry's ``_ROW_COUNT`` is its number of vectors."""
    done = set()
    for _rel, name, entries in _index_sources(ctx):
        for e in entries:
            f = e.index_file
            where = at(_mrel(name), f.file_name)
            if e.kind != M.ADD or f.external_path is not None or (f.file_name, f.index_type, f.row_count) in done:
                continue
            done.add((f.file_name, f.index_type, f.row_count))
            if not _safe(f.file_name):
                yield V("LAYOUT-007", f"index file name {f.file_name[:100]!r} is not a bare file name", where)
                continue
            if not L.name_matches("index", f.file_name):
                yield V("LAYOUT-007", f"index file {f.file_name} is not named index-<uuid>-<n>", where)
            try:
                data = ctx.storage.read(ctx.layout.index_path(f.file_name))
            except FileNotFoundError:
                yield V("LAYOUT-007", f"index file {f.file_name} does not exist in index/", where)
                continue
            if f.index_type == M.HASH_INDEX:
                if len(data) % 4:
                    yield V("INDEX-001", f"HASH index file of {len(data)} bytes is not a sequence of 4-byte hashes", where)
                elif len(data) // 4 != f.row_count:
                    yield V("IDXMAN-005", f"_ROW_COUNT {f.row_count}, the HASH index file holds {len(data) // 4} hashes", where)
            elif f.index_type == M.DELETION_VECTORS_INDEX and f.dv_ranges is not None and len(f.dv_ranges) != f.row_count:
                yield V("IDXMAN-005", f"_ROW_COUNT {f.row_count}, the entry lists {len(f.dv_ranges)} deletion vectors", where)


@check(relay=True)
def deletion_vector_files(ctx: Context) -> Iterator[Violation]:
    """Each live deletion-vector index file decodes at the ranges its entry gives (version byte, framing, size,
    CRC, cardinality, positions within the data file), and no data file has two live vectors."""
    for rel, name, entries in _index_sources(ctx):
        snap = next((s for r, s in ctx.sources() if r == rel), None)
        live = next((lv for r, _s, lv in _live(ctx) if r == rel), None)
        rows = {(e.partition, e.bucket, e.file.file_name): e.file.row_count for e in live or []}
        try:
            M.deletion_vectors(entries)
        except InvalidTable as exc:
            yield V(exc.rule or "INDEX-008", exc.message, _mrel(name))
        for e in entries:
            f = e.index_file
            if e.kind != M.ADD or f.index_type != M.DELETION_VECTORS_INDEX or f.external_path is not None:
                continue
            try:
                ipath = ctx.layout.index_path(f.file_name)
                data = ctx.storage.read(ipath)
            except (FileNotFoundError, InvalidTable):
                continue  # index_files reports it
            ranges = [DV.DvRange(data_file=r.data_file_name, offset=r.offset, length=r.length, cardinality=r.cardinality)
                      for r in (f.dv_ranges or {}).values()]
            counts = {r.data_file: rows[(e.partition, e.bucket, r.data_file)] for r in ranges
                      if (e.partition, e.bucket, r.data_file) in rows}
            for r in ranges:
                if live is not None and r.data_file not in counts:
                    yield V("INDEX-008", f"deletion vector for {r.data_file}, which is no live data file of the bucket "
                                         f"in {rel}", at(ipath, r.data_file))
            try:
                DV.read_index_file(data, ranges, path=ipath, row_counts=counts)
            except (InvalidTable, Unsupported) as exc:
                yield V(exc.rule or DV.RULE_FRAME, exc.message, ipath)
        del snap
