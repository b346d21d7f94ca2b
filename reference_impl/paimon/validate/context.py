"""What the Paimon validator reads, once: every schema, snapshot and tag of the main branch, the
manifest lists they name, the manifests and index manifests those name.

Nothing here raises for a damaged file: a file that cannot be read or parsed becomes a
``Violation`` at that file (``Context.errors``, the rule the strict parser names, else the rule
of that kind of file) and stays out of the parsed maps, so the checks see only what was read.
Only a location that holds no Paimon table at all raises (``InvalidTable``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from reference_impl.common.validation import Violation
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon import layout as L
from reference_impl.paimon import manifests as M
from reference_impl.paimon import schema as SC
from reference_impl.paimon import snapshot as SN
from reference_impl.storage import Storage, open_storage

# The rule a damaged file of each kind breaks when its parser names none.
DEFAULT_RULES = {
    "schema": "PAIMON-SCHEMA-002",
    "snapshot": "PAIMON-SNAP-005",
    "tag": "PAIMON-SNAP-005",
    "manifest-list": "PAIMON-MLIST-001",
    "manifest": "PAIMON-MANIFEST-001",
    "index-manifest": "PAIMON-IDXMAN-001",
}


@dataclass
class Context:
    storage: Storage
    layout: L.Layout = L.MAIN
    schemas: dict[int, SC.TableSchema] = field(default_factory=dict)
    schema_files: list[int] = field(default_factory=list)  # ids of every schema-N file, parsed or not
    snapshots: dict[int, SN.Snapshot] = field(default_factory=dict)
    snapshot_files: list[int] = field(default_factory=list)  # ids of every snapshot-N file, parsed or not
    tags: dict[str, SN.Snapshot] = field(default_factory=dict)
    manifest_lists: dict[str, list[M.ManifestFileMeta]] = field(default_factory=dict)
    manifests: dict[str, list[M.ManifestEntry]] = field(default_factory=dict)
    index_manifests: dict[str, list[M.IndexManifestEntry]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)  # manifest/<name> -> bytes read
    missing: dict[str, str] = field(default_factory=dict)  # root-relative path -> kind, of files named but absent
    unreadable: set[str] = field(default_factory=set)  # root-relative paths of files that exist but did not parse
    errors: list[Violation] = field(default_factory=list)

    # ---- what the checks ask for

    def sources(self) -> list[tuple[str, SN.Snapshot]]:
        """(root-relative file, snapshot) for every snapshot and tag: each names manifests that must hold."""
        out = [(self.layout.snapshot_path(i), s) for i, s in sorted(self.snapshots.items())]
        out += [(self.layout.tag_path(n), t) for n, t in sorted(self.tags.items())]
        return out

    @property
    def table_schema(self) -> SC.TableSchema | None:
        """The latest parsed schema (partition and primary keys never change across versions)."""
        return self.schemas[max(self.schemas)] if self.schemas else None

    def schema_for(self, schema_id: int) -> SC.TableSchema | None:
        return self.schemas.get(schema_id) or self.table_schema

    def manifest_names(self, snap: SN.Snapshot) -> list[tuple[str, str]]:
        """(list name, manifest name) of a snapshot's base, delta and changelog lists, in replay order."""
        out = []
        for lst in (snap.base_manifest_list, snap.delta_manifest_list, snap.changelog_manifest_list):
            if lst is not None:
                out += [(lst, m.file_name) for m in self.manifest_lists.get(lst, [])]
        return out


def _fail(ctx: Context, rel: str, kind: str, exc: Exception) -> None:
    ctx.unreadable.add(rel)
    rule = getattr(exc, "rule", None) or DEFAULT_RULES[kind]
    msg = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    ctx.errors.append(Violation(rule, f"{kind} file cannot be read: {msg}", rel))


def _load(ctx: Context, rel: str, kind: str, parse: Callable[[bytes, str], Any]) -> Any:
    """Parse the file at ``rel``; None (and a violation, or a ``missing`` note) when that fails."""
    try:
        data = ctx.storage.read(rel)
    except FileNotFoundError:
        ctx.missing[rel] = kind
        return None
    ctx.sizes[rel] = len(data)
    try:
        return parse(data, ctx.storage.uri(rel))
    except (InvalidTable, Unsupported) as exc:
        _fail(ctx, rel, kind, exc)
    except (ValueError, TypeError, KeyError, IndexError, EOFError, UnicodeError, OverflowError, AssertionError) as exc:
        _fail(ctx, rel, kind, exc)  # a decoder's own complaint about bytes that are not what they claim
    return None


def _manifest_rel(ctx: Context, name: str, rule: str) -> str | None:
    try:
        return ctx.layout.manifest_path(name, rule=rule)
    except InvalidTable as exc:
        ctx.errors.append(Violation(exc.rule or rule, exc.message, f"{L.MANIFEST_DIR}/{str(name)[:100]}"))
        return None


def open_table(location: Any) -> Context:
    """Read every metadata file of the table at ``location``; InvalidTable when it holds no Paimon schema file."""
    storage = location if isinstance(location, Storage) else open_storage(location)
    ctx = Context(storage)
    ctx.schema_files = SC.schema_ids(storage, ctx.layout)
    ctx.snapshot_files = SN.snapshot_ids(storage, ctx.layout)
    if not ctx.schema_files and not ctx.snapshot_files:
        raise InvalidTable(f"no Paimon table at {storage.uri('')}: no schema/schema-N or snapshot/snapshot-N file",
                           rule="PAIMON-LAYOUT-001")
    for i in ctx.schema_files:
        s = _load(ctx, ctx.layout.schema_path(i), "schema", lambda d, p: SC.parse_schema(d, path=p))
        if s is not None:
            ctx.schemas[i] = s
    for i in ctx.snapshot_files:
        s = _load(ctx, ctx.layout.snapshot_path(i), "snapshot", lambda d, p: SN.parse_snapshot(d, path=p))
        if s is not None:
            ctx.snapshots[i] = s
    for name in SN.tag_names(storage, ctx.layout):
        try:
            rel = ctx.layout.tag_path(name)
        except InvalidTable:
            continue
        t = _load(ctx, rel, "tag", lambda d, p, n=name: SN.parse_tag(d, name=n, path=p))
        if t is not None:
            ctx.tags[name] = t
    for _, snap in ctx.sources():
        for lst, rule in ((snap.base_manifest_list, "PAIMON-LAYOUT-004"), (snap.delta_manifest_list, "PAIMON-LAYOUT-004"),
                          (snap.changelog_manifest_list, "PAIMON-LAYOUT-004")):
            if lst is None or lst in ctx.manifest_lists:
                continue
            rel = _manifest_rel(ctx, lst, rule)
            if rel is None or rel in ctx.missing or rel in ctx.unreadable:
                continue
            metas = _load(ctx, rel, "manifest-list", lambda d, p: M.read_manifest_list(d, path=p))
            if metas is not None:
                ctx.manifest_lists[lst] = metas
        if snap.index_manifest is not None and snap.index_manifest not in ctx.index_manifests:
            rel = _manifest_rel(ctx, snap.index_manifest, "PAIMON-LAYOUT-006")
            if rel is not None and rel not in ctx.missing and rel not in ctx.unreadable:
                entries = _load(ctx, rel, "index-manifest", lambda d, p: M.read_index_manifest(d, path=p))
                if entries is not None:
                    ctx.index_manifests[snap.index_manifest] = entries
    for metas in list(ctx.manifest_lists.values()):
        for meta in metas:
            if meta.file_name in ctx.manifests:
                continue
            rel = _manifest_rel(ctx, meta.file_name, "PAIMON-MLIST-005")
            if rel is None or rel in ctx.missing or rel in ctx.unreadable:
                continue
            entries = _load(ctx, rel, "manifest", lambda d, p: M.read_manifest(d, path=p))
            if entries is not None:
                ctx.manifests[meta.file_name] = entries
    return ctx
