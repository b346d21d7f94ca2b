"""Checkpoints: naming, content equal to replay, per-row shape, V2 spec and sidecars, _last_checkpoint."""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterator

from reference_impl.common import jsontext
from reference_impl.delta.validate.context import (
    ADD, CDC, CKPT_METADATA, COMMIT_INFO, DOMAIN, LAST_CHECKPOINT, METADATA, PROTOCOL, REMOVE, SIDECAR, SIDECAR_DIR,
    TXN, Checkpoint, Context, dup_keys_hook, file_key,
)
from reference_impl.delta.validate.meta import P_STATS_JSON, P_STATS_STRUCT, Proto, config, partition_columns, truthy
from reference_impl.delta.validate.registry import V, Violation, check
from reference_impl.delta.validate.checks_log import strip_private

_ANY_CKPT = re.compile(r"^\d+\.checkpoint(\..*)?\.(parquet|json)$")


def _usable(ctx: Context) -> Iterator[Checkpoint]:
    for c in ctx.checkpoints:
        if c.rows is not None and c.complete:
            yield c


def _w(c: Checkpoint) -> str:
    return c.files[0].path if c.files else "_delta_log"


def _proto_at(ctx: Context, c: Checkpoint) -> Proto:
    st = ctx.states.get(c.version)
    if st is not None and st.protocol is not None:
        return Proto.of(st.protocol)
    for a in c.actions(include_sidecars=False):
        if a.key == PROTOCOL:
            return Proto.of(a.body)
    return Proto.of(None)


@check("CKPT-011", "CKPT-012", "CKPT-013")
def checkpoint_names(ctx: Context) -> Iterator[Violation]:
    """Checkpoint files use one of the three naming schemes exactly."""
    for f in ctx.other_log_files:
        name = f.path.rsplit("/", 1)[-1]
        if _ANY_CKPT.match(name) or ".checkpoint." in name:
            if re.match(r"^\d+\.checkpoint\.\d+\.\d+\.parquet$", name):
                yield V("CKPT-012", "multi-part checkpoint name is not <20 digits>.checkpoint.<10 digits>.<10 digits>.parquet", f.path)
            elif "-" in name:
                yield V("CKPT-013", "UUID-named checkpoint name is not <20 digits>.checkpoint.<uuid>.json|parquet", f.path)
            else:
                yield V("CKPT-011", "checkpoint file name is not <20-digit version>.checkpoint.parquet", f.path)
    for c in ctx.checkpoints:
        if c.kind == "multipart":
            for f in c.files:
                o, p = (int(x) for x in f.path.rsplit("/", 1)[-1].split(".")[2:4])
                if not (1 <= o <= p and p > 1):
                    yield V("CKPT-012", f"multi-part checkpoint part {o} of {p} is out of range", f.path)


@check("CKPT-006", "CATALOG-012")
def checkpoint_after_commit(ctx: Context) -> Iterator[Violation]:
    """A checkpoint (or compaction) exists only for committed (published) versions."""
    newest = max(ctx.versions) if ctx.versions else None
    st = ctx.states.get(newest) if newest is not None else None
    catalog = st is not None and Proto.of(st.protocol).any_list("catalogManaged")
    rule = "CATALOG-012" if catalog else "CKPT-006"
    for c in ctx.checkpoints:
        if newest is not None and c.version > newest:
            yield V(rule, f"checkpoint for version {c.version} but the newest published commit is {newest}", _w(c))
    if catalog:
        for x, y, f in ctx.compactions:
            if y > newest:
                yield V("CATALOG-012", f"log compaction up to {y} but the newest published commit is {newest}", f.path)


@check("CKPT-007", "DOMAIN-005", "REPLAY-008")
def checkpoint_equals_replay(ctx: Context) -> Iterator[Violation]:
    """A checkpoint holds exactly the reconciled state of its version."""
    for c in _usable(ctx):
        acts = c.actions()
        w = _w(c)
        adds = [a for a in acts if a.key == ADD and isinstance(a.body, dict)]
        rems = [a for a in acts if a.key == REMOVE and isinstance(a.body, dict)]
        add_paths = Counter(a.body.get("path") for a in adds if isinstance(a.body.get("path"), str))
        dup = [p for p, n in add_paths.items() if n > 1]
        if dup:
            yield V("REPLAY-008", f"checkpoint has several live adds for path {dup[0]}", w)
        akeys = {file_key(a.body) for a in adds}
        if akeys & {file_key(r.body) for r in rems}:
            yield V("REPLAY-008", "checkpoint has the same (path, dvId) live and tombstoned", w)
        st = ctx.states.get(c.version)
        if st is None or c.version not in ctx.commits:
            continue
        protos = [a.body for a in acts if a.key == PROTOCOL]
        metas = [a.body for a in acts if a.key == METADATA]
        if len(protos) != 1 or len(metas) != 1:
            yield V("CKPT-007", f"checkpoint has {len(protos)} protocol and {len(metas)} metaData actions, expected 1 each", w)
        else:
            if strip_private(protos[0]) != strip_private(st.protocol or {}) and not _features_equal(protos[0], st.protocol):
                yield V("CKPT-007", "checkpoint protocol differs from the replayed protocol", w + " protocol")
            if _norm_md(metas[0]) != _norm_md(st.metadata or {}):
                yield V("CKPT-007", "checkpoint metaData differs from the replayed metaData", w + " metaData")
        if akeys != set(st.live):
            missing = sorted(k[0] for k in set(st.live) - akeys)[:3]
            extra = sorted(k[0] for k in akeys - set(st.live))[:3]
            yield V("CKPT-007", f"checkpoint live files differ from replay (missing {missing}, extra {extra})", w + " add")
        txns = {a.body.get("appId"): a.body.get("version") for a in acts if a.key == TXN and isinstance(a.body, dict)}
        if txns != {k: t.get("version") for k, t in st.txns.items()}:
            yield V("CKPT-007", "checkpoint txns differ from replay", w + " txn")
        doms = {a.body.get("domain"): a.body.get("configuration") for a in acts
                if a.key == DOMAIN and isinstance(a.body, dict) and not a.body.get("removed")}
        for d, x in st.domains.items():
            if d not in doms:
                yield V("DOMAIN-005", f"live domain {d} missing from the checkpoint", w + " domainMetadata")
            elif doms[d] != x.get("configuration"):
                yield V("CKPT-007", f"domain {d} configuration differs from replay", w + " domainMetadata")


def _features_equal(a, b) -> bool:
    pa_, pb = Proto.of(a), Proto.of(b)
    return (pa_.reader, pa_.writer, pa_.rf or frozenset(), pa_.wf or frozenset()) == (pb.reader, pb.writer, pb.rf or frozenset(), pb.wf or frozenset())


def _norm_md(md) -> object:
    """metaData with absent-vs-empty differences (Arrow maps, null lists) evened out."""
    d = strip_private(md)
    if not isinstance(d, dict):
        return d
    d.setdefault("configuration", {})
    d.setdefault("partitionColumns", [])
    fmt = d.get("format")
    if isinstance(fmt, dict):
        fmt = dict(fmt)
        if not fmt.get("options"):
            fmt["options"] = {}
        d["format"] = fmt
    return d


@check("CKPT-008", "CKPT-009", "CKPT-025", "CKPT-026")
def checkpoint_rows(ctx: Context) -> Iterator[Violation]:
    """One action per row; no commitInfo, cdc or domain tombstones; bare removes; feature lists null below v3/v7."""
    memo: dict[int, list[tuple[str, str, str]]] = {}  # rows repeated across checkpoints are shared objects
    for c in ctx.checkpoints:
        if c.rows is None:
            continue
        for where, row in list(c.rows) + c.sidecar_rows:
            found = memo.get(id(row))
            if found is None:
                found = memo[id(row)] = list(_row_findings(row))
            for rule, message, suffix in found:
                yield V(rule, message, where + suffix)


def _row_findings(row: object) -> Iterator[tuple[str, str, str]]:
    if not isinstance(row, dict):
        return
    present = [k for k, x in row.items() if x is not None]
    if len(present) != 1:
        yield "CKPT-009", f"checkpoint row holds {len(present)} actions {present}", ""
    for k in present:
        body = row[k]
        if k in (COMMIT_INFO, CDC):
            yield "CKPT-008", f"checkpoint contains a {k} action", f" {k}"
        elif k == DOMAIN and isinstance(body, dict) and body.get("removed") is True:
            yield "CKPT-008", "checkpoint contains a domainMetadata tombstone", f" {k}"
        elif k == REMOVE and isinstance(body, dict):
            for f in ("stats", "tags"):
                if body.get(f) not in (None, {}):
                    yield "CKPT-025", f"checkpoint remove carries {f}", f" remove.{f}"
        elif k == PROTOCOL and isinstance(body, dict):
            r, w_ = body.get("minReaderVersion"), body.get("minWriterVersion")
            for lst, need, ver in (("readerFeatures", 3, r), ("writerFeatures", 7, w_)):
                val = body.get(lst)
                if isinstance(ver, int):
                    if ver >= need and val is None:
                        yield "CKPT-026", f"{lst} is null at version {ver}", f" protocol.{lst}"
                    elif ver < need and val is not None:
                        yield "CKPT-026", f"{lst} is {val!r} instead of null at version {ver}", f" protocol.{lst}"


@check("CKPT-017", "CKPT-019", "CKPT-031", "CKPT-037", "CKPT-038")
def checkpoint_spec(ctx: Context) -> Iterator[Violation]:
    """V2 spec only with v2Checkpoint, exactly one matching checkpointMetadata; V1 has none of its actions."""
    for c in ctx.checkpoints:
        if c.rows is None:
            continue
        p = _proto_at(ctx, c)
        v2_supported = p.both("v2Checkpoint")
        w = _w(c)
        acts = c.actions(include_sidecars=False)
        cms = [a for a in acts if a.key == CKPT_METADATA]
        scs = [a for a in acts if a.key == SIDECAR]
        if c.kind == "multipart" and v2_supported:
            yield V("CKPT-017", "multi-part checkpoint in a v2Checkpoint table", w)
        if cms and not v2_supported:
            yield V("CKPT-019", "V2-spec checkpoint (checkpointMetadata) without the v2Checkpoint feature", w)
            continue
        if c.kind.startswith("v2") and not cms:
            yield V("CKPT-019", "UUID-named checkpoint is not V2 spec (no checkpointMetadata)", w)
            continue
        if c.kind == "multipart" and cms:
            yield V("CKPT-019", "multi-part checkpoint carries checkpointMetadata (V2 spec)", w)
            continue
        if not cms and scs:
            yield V("CKPT-038", "V1-spec checkpoint carries sidecar actions", w)
        for a in cms:
            if not isinstance(a.body, dict) or not isinstance(a.body.get("version"), int):
                yield V("CKPT-037", "checkpointMetadata lacks a long version", a.where)
        good = [a for a in cms if isinstance(a.body, dict) and isinstance(a.body.get("version"), int)]
        if len(cms) > 1:
            yield V("CKPT-031", f"{len(cms)} checkpointMetadata actions, expected one", w)
        elif good and good[0].body["version"] != c.version:
            yield V("CKPT-031", f"checkpointMetadata.version {good[0].body['version']} != checkpoint version {c.version}", w)


@check("CKPT-032", "CKPT-033", "CKPT-035", "CKPT-036", "CKPT-045")
def sidecars(ctx: Context) -> Iterator[Violation]:
    """Sidecars: complete actions, files in _delta_log/_sidecars that exist, only file actions, never mixed with inline ones."""
    for c in ctx.checkpoints:
        if c.rows is None:
            continue
        acts = c.actions(include_sidecars=False)
        scs = [a for a in acts if a.key == SIDECAR]
        if not scs or not any(a.key == CKPT_METADATA for a in acts):
            continue  # sidecars in a V1 checkpoint are CKPT-038's business
        if any(a.key in (ADD, REMOVE) for a in acts):
            yield V("CKPT-033", "V2 checkpoint has both inline file actions and sidecars", _w(c))
        for a in scs:
            b = a.body if isinstance(a.body, dict) else {}
            bad = [k for k, ok in (("path", isinstance(b.get("path"), str)), ("sizeInBytes", isinstance(b.get("sizeInBytes"), int)),
                                   ("modificationTime", isinstance(b.get("modificationTime"), int))) if not ok]
            if bad:
                yield V("CKPT-036", f"sidecar action lacks or mistypes {bad}", a.where)
            if not isinstance(b.get("path"), str):
                continue
            rel = ctx.sidecar_path(b["path"])
            if rel is None or rel.rsplit("/", 1)[0] != SIDECAR_DIR:
                yield V("CKPT-035", f"sidecar {b['path']!r} is not in {SIDECAR_DIR}", a.where)
            elif not ctx.exists(rel):
                yield V("CKPT-045", f"referenced sidecar {rel} does not exist", a.where)
        for where, row in c.sidecar_rows:
            others = [k for k, x in row.items() if x is not None and k not in (ADD, REMOVE)]
            if others:
                yield V("CKPT-032", f"sidecar row holds non-file actions {others}", where)


@check("CKPT-022", "CKPT-023", "CKPT-024")
def checkpoint_stats_columns(ctx: Context) -> Iterator[Violation]:
    """stats, stats_parsed and partitionValues_parsed follow writeStatsAsJson / writeStatsAsStruct."""
    for c in _usable(ctx):
        st = ctx.states.get(c.version)
        if st is None:
            continue
        cfg = config(st.metadata)
        as_json = cfg.get(P_STATS_JSON, "true").lower() != "false"
        as_struct = truthy(cfg.get(P_STATS_STRUCT))
        adds = [a for a in c.actions() if a.key == ADD and isinstance(a.body, dict)]
        if not adds:
            continue
        keys = set().union(*(a.body.keys() for a in adds))
        w = _w(c)
        if as_struct and partition_columns(st.metadata) and ("partitionValues_parsed" not in keys or
                                                              all(a.body.get("partitionValues_parsed") is None for a in adds)):
            yield V("CKPT-022", "partitioned table with writeStatsAsStruct=true lacks add.partitionValues_parsed", w)
        live_stats = {k[0] for k, b in st.live.items() if b.get("stats")}
        if as_json and any(str(a.body.get("path")) in live_stats and a.body.get("stats") is None for a in adds):
            yield V("CKPT-023", "checkpoint add lacks the stats JSON the log has (writeStatsAsJson defaults to true)", w)
        if as_struct and live_stats and all(a.body.get("stats_parsed") is None for a in adds):
            yield V("CKPT-024", "writeStatsAsStruct=true but checkpoint adds lack stats_parsed", w)


@check("CKPT-027", "CKPT-030")
def last_checkpoint(ctx: Context) -> Iterator[Violation]:
    """_last_checkpoint: one JSON object, no duplicate keys, version/size matching an existing checkpoint."""
    try:
        raw = ctx.storage.read(LAST_CHECKPOINT)
    except Exception:
        return
    try:
        obj = jsontext.loads(raw, object_pairs_hook=dup_keys_hook)
    except ValueError:
        yield V("CKPT-027", "_last_checkpoint is not JSON", LAST_CHECKPOINT)
        return
    if not isinstance(obj, dict):
        yield V("CKPT-027", "_last_checkpoint is not a JSON object", LAST_CHECKPOINT)
        return
    if "\x00dups" in obj:
        dups = obj["\x00dups"]
        yield V("CKPT-030", f"_last_checkpoint repeats keys {dups}", LAST_CHECKPOINT)
        return
    v, size = obj.get("version"), obj.get("size")
    if not isinstance(v, int) or not isinstance(size, int):
        yield V("CKPT-027", "_last_checkpoint needs integer version and size", LAST_CHECKPOINT)
        return
    cands = [c for c in ctx.checkpoints if c.version == v]
    if not cands:
        yield V("CKPT-027", f"_last_checkpoint names version {v} but no checkpoint exists for it", LAST_CHECKPOINT)
        return
    if not any(c.complete for c in cands):
        # whatever the missing parts held: the hint points at a checkpoint readers must ignore
        yield V("CKPT-027", f"_last_checkpoint names version {v}, whose multi-part checkpoint lacks parts",
                LAST_CHECKPOINT)
        return
    parts = obj.get("parts")
    if parts is not None and not any(c.kind == "multipart" and c.num_parts == parts for c in cands):
        yield V("CKPT-027", f"_last_checkpoint parts={parts} does not match the checkpoint", LAST_CHECKPOINT)
    if parts is None and all(c.kind == "multipart" for c in cands):
        yield V("CKPT-027", "_last_checkpoint lacks parts for a multi-part checkpoint", LAST_CHECKPOINT)
    sizes = {len(c.rows) for c in cands if c.rows is not None and not c.sidecar_rows and c.kind in ("classic", "multipart")}
    if sizes and size not in sizes:
        yield V("CKPT-027", f"_last_checkpoint size={size} but the checkpoint holds {sorted(sizes)} actions", LAST_CHECKPOINT)
