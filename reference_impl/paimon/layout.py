"""Storage layout and file naming (spec: Storage Specification; Java FileStorePathFactory, BranchManager, TagManager).

A table directory holds ``snapshot/``, ``schema/``, ``manifest/`` and, when used, ``index/``,
``statistics/``, ``tag/``, ``changelog/``, ``consumer/`` and ``branch/``; data sits in
``<partition path>/bucket-N/``. A branch ``b`` keeps its own ``snapshot/``, ``schema/``, ``tag/``,
``changelog/`` and ``consumer/`` under ``branch/branch-b/`` but shares the table root's
``manifest/``, ``index/``, ``statistics/`` and data directories (Java builds only the first five
from ``BranchManager.branchPath``; ``FileStorePathFactory`` is rooted at the table).

Numbers in names are read strictly: ASCII decimal digits, no sign, no padding, at most a Java
long. Java parses ``snapshot-01`` or ``snapshot-+1`` as 1 (``Long.parseLong``), but no Paimon
writer spells an id that way, so such a name is a stray file here, never a second spelling.
Names read from metadata (manifest lists, manifests, index files) must be bare file names: a
``/``, ``..`` or NUL would lead outside the directory the spec resolves them in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reference_impl.errors import InvalidTable
from reference_impl.storage import Storage

# Directories (Java: SnapshotManager, SchemaManager, FileStorePathFactory, TagManager, ...).
SNAPSHOT_DIR = "snapshot"
SCHEMA_DIR = "schema"
MANIFEST_DIR = "manifest"
INDEX_DIR = "index"
STATISTICS_DIR = "statistics"
TAG_DIR = "tag"
BRANCH_DIR = "branch"
CHANGELOG_DIR = "changelog"
CONSUMER_DIR = "consumer"
# File name prefixes.
SNAPSHOT_PREFIX = "snapshot-"
SCHEMA_PREFIX = "schema-"
TAG_PREFIX = "tag-"
BRANCH_PREFIX = "branch-"
CHANGELOG_PREFIX = "changelog-"
CONSUMER_PREFIX = "consumer-"
MANIFEST_LIST_PREFIX = "manifest-list-"
MANIFEST_PREFIX = "manifest-"
INDEX_MANIFEST_PREFIX = "index-manifest-"
INDEX_FILE_PREFIX = "index-"
STATISTICS_PREFIX = "stat-"
BUCKET_PREFIX = "bucket-"
# The only mutable files of a table (FileType.isMutable): hints, never the truth.
EARLIEST = "EARLIEST"
LATEST = "LATEST"
MAIN_BRANCH = "main"
POSTPONE_BUCKET = -2
POSTPONE_BUCKET_DIR = "bucket-postpone"

MAX_LONG = (1 << 63) - 1
_DIGITS = re.compile(r"(?:0|[1-9][0-9]{0,18})\Z")  # canonical decimal, at most 19 digits (a Java long)
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# ``<prefix><uuid>-<counter>``: what FileStorePathFactory writes (PAIMON-LAYOUT-004..007).
NAME_PATTERNS = {
    "manifest-list": re.compile(rf"manifest-list-{_UUID}-(?:0|[1-9][0-9]{{0,18}})\Z"),
    "manifest": re.compile(rf"manifest-{_UUID}-(?:0|[1-9][0-9]{{0,18}})\Z"),
    "index-manifest": re.compile(rf"index-manifest-{_UUID}-(?:0|[1-9][0-9]{{0,18}})\Z"),
    "index": re.compile(rf"index-{_UUID}-(?:0|[1-9][0-9]{{0,18}})\Z"),
    "statistics": re.compile(rf"stat-{_UUID}-(?:0|[1-9][0-9]{{0,18}})\Z"),
}
NAME_RULES = {"manifest-list": "PAIMON-LAYOUT-004", "manifest": "PAIMON-LAYOUT-005",
              "index-manifest": "PAIMON-LAYOUT-006", "index": "PAIMON-LAYOUT-007", "statistics": "PAIMON-LAYOUT-001"}
MAX_NAME_LENGTH = 1024  # far above any generated name; a longer one is not a file name a writer made


def parse_id(text: object) -> int | None:
    """The non-negative id ``text`` spells canonically (ASCII digits, no padding, fits a long), else None."""
    if not isinstance(text, str) or not _DIGITS.match(text):
        return None
    n = int(text)
    return n if n <= MAX_LONG else None


def versioned_id(name: str, prefix: str) -> int | None:
    """The id of ``<prefix><id>`` (``snapshot-3`` -> 3), None for any other name (temp files, typos)."""
    return parse_id(name[len(prefix):]) if name.startswith(prefix) else None


def name_matches(kind: str, name: str) -> bool:
    """Whether ``name`` is spelled the way the spec names a file of ``kind`` (a key of NAME_PATTERNS)."""
    return bool(NAME_PATTERNS[kind].match(name))


def bare_name(name: object, *, what: str, rule: str, path: str | None = None) -> str:
    """``name`` if it is a plain file name (no directory part, not ``.``/``..``); InvalidTable otherwise.

    Manifest lists, manifests and index files are recorded by bare name and resolved in a fixed
    directory; anything else would let a hostile table make the reader open files elsewhere.
    """
    if not isinstance(name, str) or not name:
        raise InvalidTable(f"{what} must be a non-empty file name, got {name!r}", rule=rule, path=path)
    if (len(name) > MAX_NAME_LENGTH or name in (".", "..") or any(c in name for c in "/\\\x00")
            or not name.isprintable()):
        raise InvalidTable(f"{what} {name[:100]!r} is not a bare file name (it would leave its directory)",
                           rule=rule, path=path, hint="the spec records these files by name inside the table")
    return name


def check_ref_name(name: object, what: str) -> str:
    """A tag or branch name usable as one path segment; InvalidTable for blank, ``/``, ``..`` or control characters."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidTable(f"{what} name must be a non-blank string, got {name!r}")
    if len(name) > MAX_NAME_LENGTH or name in (".", "..") or any(c in name for c in "/\\\x00") or not name.isprintable():
        raise InvalidTable(f"{what} name {name[:100]!r} cannot name a file inside the table")
    return name


def bucket_dir(bucket: int) -> str:
    """The bucket directory name: ``bucket-N``, or ``bucket-postpone`` for the postpone bucket -2 (PAIMON-LAYOUT-010)."""
    return POSTPONE_BUCKET_DIR if bucket == POSTPONE_BUCKET else f"{BUCKET_PREFIX}{bucket}"


@dataclass(frozen=True, slots=True)
class Layout:
    """Where the files of one branch live; ``Layout()`` is the main branch at the table root."""

    branch: str = MAIN_BRANCH

    def __post_init__(self) -> None:
        check_ref_name(self.branch, "branch")

    @property
    def is_main(self) -> bool:
        return self.branch == MAIN_BRANCH

    @property
    def root(self) -> str:
        """The branch's own root, relative to the table: "" for main, ``branch/branch-<name>`` otherwise."""
        return "" if self.is_main else f"{BRANCH_DIR}/{BRANCH_PREFIX}{self.branch}"

    def _own(self, directory: str) -> str:
        return f"{self.root}/{directory}" if self.root else directory

    # Branch-local metadata.
    @property
    def snapshot_dir(self) -> str:
        return self._own(SNAPSHOT_DIR)

    @property
    def schema_dir(self) -> str:
        return self._own(SCHEMA_DIR)

    @property
    def tag_dir(self) -> str:
        return self._own(TAG_DIR)

    @property
    def changelog_dir(self) -> str:
        return self._own(CHANGELOG_DIR)

    @property
    def consumer_dir(self) -> str:
        return self._own(CONSUMER_DIR)

    def snapshot_path(self, snapshot_id: int) -> str:
        return f"{self.snapshot_dir}/{SNAPSHOT_PREFIX}{snapshot_id}"

    def hint_path(self, hint: str) -> str:
        return f"{self.snapshot_dir}/{hint}"

    def schema_path(self, schema_id: int) -> str:
        return f"{self.schema_dir}/{SCHEMA_PREFIX}{schema_id}"

    def tag_path(self, tag: str) -> str:
        return f"{self.tag_dir}/{TAG_PREFIX}{check_ref_name(tag, 'tag')}"

    def changelog_path(self, snapshot_id: int) -> str:
        return f"{self.changelog_dir}/{CHANGELOG_PREFIX}{snapshot_id}"

    def consumer_path(self, consumer_id: str) -> str:
        return f"{self.consumer_dir}/{CONSUMER_PREFIX}{check_ref_name(consumer_id, 'consumer')}"

    # Shared by every branch: the table root's directories.
    manifest_dir = MANIFEST_DIR
    index_dir = INDEX_DIR
    statistics_dir = STATISTICS_DIR

    def manifest_path(self, name: str, *, what: str = "manifest file", rule: str = "PAIMON-MLIST-005") -> str:
        """A manifest list, manifest or index manifest, by the bare name metadata records."""
        return f"{MANIFEST_DIR}/{bare_name(name, what=what, rule=rule)}"

    def index_path(self, name: str) -> str:
        """A table-index file (hash index, deletion vectors) without an external path."""
        return f"{INDEX_DIR}/{bare_name(name, what='index file', rule='PAIMON-LAYOUT-007')}"

    def statistics_path(self, name: str) -> str:
        return f"{STATISTICS_DIR}/{bare_name(name, what='statistics file', rule='PAIMON-LAYOUT-001')}"


MAIN = Layout()


def list_ids(storage: Storage, directory: str, prefix: str) -> list[int]:
    """Ids of the ``<prefix><id>`` files directly in ``directory``, ascending (other names ignored)."""
    ids = []
    for info in storage.list(directory):
        n = versioned_id(info.path.rsplit("/", 1)[-1], prefix)
        if n is not None:
            ids.append(n)
    return sorted(ids)


def list_suffixes(storage: Storage, directory: str, prefix: str) -> list[str]:
    """The ``<suffix>`` of every ``<prefix><suffix>`` file directly in ``directory``, sorted (tag names)."""
    out = []
    for info in storage.list(directory):
        name = info.path.rsplit("/", 1)[-1]
        if name.startswith(prefix) and len(name) > len(prefix):
            out.append(name[len(prefix):])
    return sorted(out)


def list_branches(storage: Storage) -> list[str]:
    """Names of the branches under ``branch/`` (a directory ``branch-<name>`` holding any file), sorted.

    Object stores have no empty directories, so a branch is seen through its files; Java's
    ``FileSystemBranchManager.branches`` lists the same directories.
    """
    names = set()
    for info in storage.walk(BRANCH_DIR):
        parts = info.path.split("/")
        if len(parts) >= 3 and parts[0] == BRANCH_DIR and parts[1].startswith(BRANCH_PREFIX):
            name = parts[1][len(BRANCH_PREFIX):]
            if name and name != MAIN_BRANCH:
                names.add(name)
    return sorted(names)


def layout_for(storage: Storage, branch: str | None) -> Layout:
    """The layout of ``branch`` (None or "main" = the table root); InvalidTable naming the branches that exist."""
    if branch is None or branch == MAIN_BRANCH:
        return MAIN
    layout = Layout(branch)
    if not storage.list(layout.schema_dir) and not storage.list(layout.snapshot_dir):
        known = list_branches(storage)
        raise InvalidTable(f"no branch named {branch!r} (branches: {', '.join(known) if known else 'none'})",
                           hint="a branch lives in branch/branch-<name>/ with its own snapshot/ and schema/")
    return layout


__all__ = ["Layout", "MAIN", "parse_id", "versioned_id", "name_matches", "bare_name", "check_ref_name", "bucket_dir",
           "list_ids", "list_suffixes", "list_branches", "layout_for", "NAME_PATTERNS", "NAME_RULES"]
