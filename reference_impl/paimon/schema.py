"""Schema (spec: Schema; Java TableSchema, SchemaSerializer, CoreOptions): ``schema/schema-N`` JSON files.

A schema file is ``{"version", "id", "fields", "highestFieldId", "partitionKeys", "primaryKeys",
"options", "comment"?, "timeMillis"}``. Reading follows ``SchemaSerializer.deserialize``: no
``version`` means 1 (Paimon 0.7); a version-1 file without ``bucket`` gets ``bucket=1`` (the old
default); versions 1 and 2 without ``file.format`` get ``orc``; a missing ``timeMillis`` is 0.
Unknown keys are ignored. ``comment: null`` reads as no comment (pypaimon writes it; Java omits
the key, and Java's ``asText()`` would turn a JSON null into the string "null").

Options keep Java's defaults (``CoreOptions``) in one table, ``OPTION_DEFAULTS``; the typed
helpers (``bucket``, ``bucket_keys``, ``merge_engine``, ...) read the effective value. Checks that
a writer must respect but a reader can live without (unique field ids, keys that exist, a
non-empty trimmed primary key, NOT NULL map keys, a valid bucket key) are pure functions that
return ``Violation``s for the validator; ``parse_schema`` raises only for files it cannot read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterator, Mapping

from reference_impl.common import bounded
from reference_impl.common.jsontext import loads
from reference_impl.common.validation import Violation
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.paimon import layout as L
from reference_impl.paimon.types import DataField, DataType, field_json, parse_field, walk
from reference_impl.storage import Storage

# Schema file keys (SchemaSerializer).
VERSION = "version"
ID = "id"
FIELDS = "fields"
HIGHEST_FIELD_ID = "highestFieldId"
PARTITION_KEYS = "partitionKeys"
PRIMARY_KEYS = "primaryKeys"
OPTIONS = "options"
COMMENT = "comment"
TIME_MILLIS = "timeMillis"

PAIMON_07_VERSION = 1
PAIMON_08_VERSION = 2
CURRENT_VERSION = 3
MAX_INT = (1 << 31) - 1
MAX_LONG = (1 << 63) - 1

# Option keys and Java's defaults (CoreOptions); the ones that change the layout of files first.
BUCKET = "bucket"
BUCKET_KEY = "bucket-key"
BUCKET_FUNCTION_TYPE = "bucket-function.type"
FILE_FORMAT = "file.format"
FILE_COMPRESSION = "file.compression"
MANIFEST_COMPRESSION = "manifest.compression"
MERGE_ENGINE = "merge-engine"
SEQUENCE_FIELD = "sequence.field"
SEQUENCE_FIELD_SORT_ORDER = "sequence.field.sort-order"
ROWKIND_FIELD = "rowkind.field"
CHANGELOG_PRODUCER = "changelog-producer"
DELETION_VECTORS_ENABLED = "deletion-vectors.enabled"
DELETION_VECTORS_BITMAP64 = "deletion-vectors.bitmap64"
DATA_FILE_THIN_MODE = "data-file.thin-mode"
DATA_EVOLUTION_ENABLED = "data-evolution.enabled"
ROW_TRACKING_ENABLED = "row-tracking.enabled"
METADATA_STATS_MODE = "metadata.stats-mode"
PARTITION_LEGACY_NAME = "partition.legacy-name"
PARTITION_DEFAULT_NAME = "partition.default-name"
FILE_INDEX_IN_MANIFEST_THRESHOLD = "file-index.in-manifest-threshold"
DATA_FILE_PREFIX = "data-file.prefix"
CHANGELOG_FILE_PREFIX = "changelog-file.prefix"
FILE_SUFFIX_INCLUDE_COMPRESSION = "file.suffix.include.compression"
DATA_FILE_PATH_DIRECTORY = "data-file.path-directory"

OPTION_DEFAULTS: Mapping[str, str] = MappingProxyType({
    BUCKET: "-1",
    BUCKET_FUNCTION_TYPE: "default",
    FILE_FORMAT: "parquet",
    FILE_COMPRESSION: "zstd",
    MANIFEST_COMPRESSION: "zstd",
    MERGE_ENGINE: "deduplicate",
    SEQUENCE_FIELD_SORT_ORDER: "ascending",
    CHANGELOG_PRODUCER: "none",
    DELETION_VECTORS_ENABLED: "false",
    DELETION_VECTORS_BITMAP64: "false",
    DATA_FILE_THIN_MODE: "false",
    DATA_EVOLUTION_ENABLED: "false",
    ROW_TRACKING_ENABLED: "false",
    METADATA_STATS_MODE: "truncate(16)",
    PARTITION_LEGACY_NAME: "true",
    PARTITION_DEFAULT_NAME: "__DEFAULT_PARTITION__",
    FILE_INDEX_IN_MANIFEST_THRESHOLD: "500 B",
    DATA_FILE_PREFIX: "data-",
    CHANGELOG_FILE_PREFIX: "changelog-",
    FILE_SUFFIX_INCLUDE_COMPRESSION: "false",
})
# Enum options: the values Java accepts (compared case-insensitively, OptionsUtils.convertToEnum).
ENUM_VALUES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    MERGE_ENGINE: ("deduplicate", "partial-update", "aggregation", "first-row"),
    CHANGELOG_PRODUCER: ("none", "input", "full-compaction", "lookup"),
    BUCKET_FUNCTION_TYPE: ("default", "mod", "hive"),
    SEQUENCE_FIELD_SORT_ORDER: ("ascending", "descending"),
})
DYNAMIC_BUCKET = -1
POSTPONE_BUCKET = -2


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSchema:
    """One schema version; ``options`` already carries the compatibility defaults of old versions."""

    version: int
    id: int
    fields: tuple[DataField, ...]
    highest_field_id: int
    partition_keys: tuple[str, ...]
    primary_keys: tuple[str, ...]
    options: Mapping[str, str] = field(hash=False)
    comment: str | None = None
    time_millis: int = 0
    # Option keys whose JSON value was not a string (read as Java's asText would; PAIMON-SCHEMA-010).
    non_string_options: tuple[str, ...] = ()

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def get_field(self, name: str) -> DataField | None:
        """The top-level field called ``name`` (the last one if a broken schema repeats it, as Java's map does)."""
        found = None
        for f in self.fields:
            if f.name == name:
                found = f
        return found

    # -- keys ------------------------------------------------------------------------------

    @property
    def trimmed_primary_keys(self) -> tuple[str, ...]:
        """Primary keys minus partition keys: the key stored in data files and manifests (PAIMON-SCHEMA-022)."""
        return tuple(k for k in self.primary_keys if k not in self.partition_keys)

    @property
    def bucket_keys(self) -> tuple[str, ...]:
        """``bucket-key`` split on ``,`` exactly as Java does (no trimming), else the trimmed primary key.

        An append table without ``bucket-key`` has no bucket key (PAIMON-BUCKET-003): fixed-bucket
        append tables must configure one, bucket-unaware ones do not hash at all.
        """
        raw = self.options.get(BUCKET_KEY)
        if raw is None or not raw.strip():
            return self.trimmed_primary_keys
        return tuple(raw.split(","))

    # -- options ---------------------------------------------------------------------------

    def option(self, key: str) -> str | None:
        """The effective value of an option: the table's own, else Java's default (None if it has none)."""
        value = self.options.get(key)
        return value if value is not None else OPTION_DEFAULTS.get(key)

    def bool_option(self, key: str) -> bool:
        """A boolean option (``true``/``false`` in any case, as Java's convertToBoolean)."""
        value = self.option(key)
        if value is None or value.upper() not in ("TRUE", "FALSE"):
            raise InvalidTable(f"option {key}={value!r} is not a boolean", rule="PAIMON-SCHEMA-010")
        return value.upper() == "TRUE"

    def enum_option(self, key: str) -> str:
        """An enum option in its canonical lower-case spelling; InvalidTable listing the accepted values."""
        value = self.option(key) or ""
        for accepted in ENUM_VALUES[key]:
            if value.upper() == accepted.upper():
                return accepted
        raise InvalidTable(f"option {key}={value!r} is not one of {', '.join(ENUM_VALUES[key])}", rule="PAIMON-SCHEMA-010")

    @property
    def bucket(self) -> int:
        """The bucket count: N > 0 fixed, -1 dynamic (PK) or unaware (append), -2 postpone (PAIMON-BUCKET-001)."""
        raw = self.option(BUCKET)
        n = _java_int(raw)
        if n is None:
            raise InvalidTable(f"option bucket={raw!r} is not an integer", rule="PAIMON-BUCKET-001")
        return n

    @property
    def file_format(self) -> str:
        """``file.format`` lower-cased (CoreOptions.normalizeFileFormat)."""
        return (self.option(FILE_FORMAT) or "").lower()

    @property
    def merge_engine(self) -> str:
        return self.enum_option(MERGE_ENGINE)

    @property
    def changelog_producer(self) -> str:
        return self.enum_option(CHANGELOG_PRODUCER)

    @property
    def sequence_fields(self) -> tuple[str, ...]:
        """``sequence.field`` split on ``,`` and trimmed (CoreOptions.sequenceField); empty if unset."""
        raw = self.options.get(SEQUENCE_FIELD)
        return () if raw is None else tuple(s.strip() for s in raw.split(","))

    @property
    def rowkind_field(self) -> str | None:
        return self.options.get(ROWKIND_FIELD)

    @property
    def deletion_vectors_enabled(self) -> bool:
        return self.bool_option(DELETION_VECTORS_ENABLED)

    @property
    def is_primary_key_table(self) -> bool:
        return bool(self.primary_keys)


def _java_int(text: str | None) -> int | None:
    """What ``Integer.parseInt`` accepts: an optional sign and ASCII digits, within an int."""
    if text is None or not text or len(text) > 12:
        return None
    body = text[1:] if text[0] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    n = int(text)
    return n if -MAX_INT - 1 <= n <= MAX_INT else None


# ----------------------------------------------------------------------------------------------
# Parsing
# ----------------------------------------------------------------------------------------------


def _int(node: Mapping[str, Any], key: str, where: str | None, *, low: int, high: int, rule: str) -> int:
    value = node.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidTable(f"schema {key!r} must be an integer in [{low}, {high}], got {value!r}", path=where, rule=rule)
    return value


def _names(node: Mapping[str, Any], key: str, where: str | None) -> tuple[str, ...]:
    value = node.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidTable(f"schema {key!r} must be a list of field names, got {value!r:.100}", path=where, rule="PAIMON-SCHEMA-002")
    return tuple(value)


def _option_text(value: Any) -> str | None:
    """What Java's ``JsonNode.asText()`` gives for an option value that is not a string (None: refuse)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return None


def parse_schema(data: bytes | str | Mapping[str, Any], *, path: str | None = None) -> TableSchema:
    """A schema file's content (JSON bytes/text or the parsed object); InvalidTable naming what is unreadable."""
    node = load_json(data, "schema file", path, "PAIMON-SCHEMA-002") if not isinstance(data, Mapping) else data
    if not isinstance(node, Mapping):
        raise InvalidTable("a schema file must be a JSON object", path=path, rule="PAIMON-SCHEMA-002")
    version = PAIMON_07_VERSION if node.get(VERSION) is None else _int(node, VERSION, path, low=1, high=MAX_INT, rule="PAIMON-SCHEMA-003")
    if version > CURRENT_VERSION:
        # Versions only ever added compatibility defaults for older files; a newer one may change
        # meaning in ways this reader cannot know.
        raise Unsupported(f"schema file version {version} is newer than {CURRENT_VERSION}", feature=f"schema version {version}",
                          path=path, rule="PAIMON-SCHEMA-003")
    schema_id = _int(node, ID, path, low=0, high=MAX_LONG, rule="PAIMON-SCHEMA-002")
    raw_fields = node.get(FIELDS)
    if not isinstance(raw_fields, list):
        raise InvalidTable("schema 'fields' must be a list", path=path, rule="PAIMON-SCHEMA-002")
    try:
        fields = tuple(parse_field(f) for f in raw_fields)
    except InvalidTable as exc:
        raise InvalidTable(f"schema field: {exc.message}", path=path, rule=exc.rule) from None
    highest = _int(node, HIGHEST_FIELD_ID, path, low=-MAX_INT - 1, high=MAX_INT, rule="PAIMON-SCHEMA-002")
    raw_options = node.get(OPTIONS)
    if not isinstance(raw_options, Mapping):
        raise InvalidTable("schema 'options' must be an object of strings", path=path, rule="PAIMON-SCHEMA-010")
    options: dict[str, str] = {}
    non_string = []
    for key, value in raw_options.items():
        if isinstance(value, str):
            options[key] = value
            continue
        text = _option_text(value)
        if text is None:
            raise InvalidTable(f"option {key!r} must be a string, got {value!r:.100}", path=path, rule="PAIMON-SCHEMA-010")
        options[key] = text
        non_string.append(key)
    # Compatibility defaults (spec: Schema > Compatibility; SchemaSerializer.deserialize).
    if version <= PAIMON_07_VERSION and BUCKET not in options:
        options[BUCKET] = "1"
    if version <= PAIMON_08_VERSION and FILE_FORMAT not in options:
        options[FILE_FORMAT] = "orc"
    comment = node.get(COMMENT)
    if comment is not None and not isinstance(comment, str):
        raise InvalidTable(f"schema 'comment' must be a string, got {comment!r:.100}", path=path, rule="PAIMON-SCHEMA-002")
    time_millis = 0 if node.get(TIME_MILLIS) is None else _int(node, TIME_MILLIS, path, low=-MAX_LONG - 1, high=MAX_LONG,
                                                                 rule="PAIMON-SCHEMA-021")
    return TableSchema(version=version, id=schema_id, fields=fields, highest_field_id=highest,
                       partition_keys=_names(node, PARTITION_KEYS, path), primary_keys=_names(node, PRIMARY_KEYS, path),
                       options=MappingProxyType(options), comment=comment, time_millis=time_millis,
                       non_string_options=tuple(non_string))


def load_json(data: bytes | str, what: str, path: str | None, rule: str, **kwargs: Any) -> Any:
    """JSON text of a metadata file, bounded in size and nesting; InvalidTable if it is not JSON."""
    if len(data) > bounded.max_inflate():
        raise InvalidTable(f"{what} is {len(data):,} bytes, more than the {bounded.max_inflate():,} allowed", path=path, rule=rule,
                           hint="if the table is genuine, raise LAKECONF_MAX_INFLATE_BYTES")
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return loads(text, **kwargs)
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidTable(f"{what} is not valid JSON: {str(exc)[:200]}", path=path, rule=rule) from None


def schema_to_dict(schema: TableSchema) -> dict[str, Any]:
    """The JSON object Java's SchemaSerializer writes for ``schema`` (comment only when set)."""
    out: dict[str, Any] = {VERSION: schema.version, ID: schema.id, FIELDS: [field_json(f) for f in schema.fields],
                           HIGHEST_FIELD_ID: schema.highest_field_id, PARTITION_KEYS: list(schema.partition_keys),
                           PRIMARY_KEYS: list(schema.primary_keys), OPTIONS: dict(schema.options)}
    if schema.comment is not None:
        out[COMMENT] = schema.comment
    out[TIME_MILLIS] = schema.time_millis
    return out


# ----------------------------------------------------------------------------------------------
# Schema files of a table
# ----------------------------------------------------------------------------------------------


def schema_ids(storage: Storage, layout: L.Layout = L.MAIN) -> list[int]:
    """Ids of the ``schema-N`` files of a branch, ascending."""
    return L.list_ids(storage, layout.schema_dir, L.SCHEMA_PREFIX)


def load_schema(storage: Storage, schema_id: int, layout: L.Layout = L.MAIN) -> TableSchema:
    """``schema/schema-<id>``; InvalidTable naming the ids that exist when it does not, or when its ``id`` differs."""
    rel = layout.schema_path(schema_id)
    try:
        data = storage.read(rel)
    except FileNotFoundError:
        known = schema_ids(storage, layout)
        raise InvalidTable(f"schema {schema_id} does not exist (schemas: {id_ranges(known)})", path=storage.uri(rel),
                           rule="PAIMON-SNAP-008") from None
    schema = parse_schema(data, path=storage.uri(rel))
    if schema.id != schema_id:
        raise InvalidTable(f"schema file schema-{schema_id} holds schema id {schema.id}", path=storage.uri(rel), rule="PAIMON-LAYOUT-003")
    return schema


def list_schemas(storage: Storage, layout: L.Layout = L.MAIN) -> list[TableSchema]:
    """Every schema of a branch, by ascending id."""
    return [load_schema(storage, i, layout) for i in schema_ids(storage, layout)]


def latest_schema(storage: Storage, layout: L.Layout = L.MAIN) -> TableSchema | None:
    """The highest-numbered schema (spec: usually the latest; a snapshot's ``schemaId`` is the authority)."""
    ids = schema_ids(storage, layout)
    return load_schema(storage, ids[-1], layout) if ids else None


def id_ranges(ids: list[int]) -> str:
    """``0..3, 5`` for a listing: short enough for an error message."""
    if not ids:
        return "none"
    parts, start, prev = [], ids[0], ids[0]
    for n in ids[1:] + [None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else f"{start}..{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(parts)


# ----------------------------------------------------------------------------------------------
# Validation helpers (pure; each returns the violations it finds, by rule id)
# ----------------------------------------------------------------------------------------------


def _types(t: DataType, *, into_rows: bool = True) -> Iterator[DataType]:
    """``t`` and every type nested in it: elements, keys, values and (``into_rows``) ROW fields' types."""
    yield t
    for child in (t.element, t.key, t.value):
        if child is not None:
            yield from _types(child, into_rows=into_rows)
    if into_rows:
        for f in t.fields:
            yield from _types(f.type)


def check_field_ids(schema: TableSchema, where: str = "") -> list[Violation]:
    """Field ids unique across the nested schema and not above ``highestFieldId`` (PAIMON-SCHEMA-006)."""
    out, seen = [], {}
    for f in walk(schema.fields):
        if f.id in seen:
            out.append(Violation("PAIMON-SCHEMA-006", f"field id {f.id} is used by both {seen[f.id]!r} and {f.name!r}", where))
        else:
            seen[f.id] = f.name
        if f.id > schema.highest_field_id:
            out.append(Violation("PAIMON-SCHEMA-006", f"field {f.name!r} has id {f.id}, above highestFieldId {schema.highest_field_id}", where))
    return out


def check_field_names(schema: TableSchema, where: str = "") -> list[Violation]:
    """Top-level and ROW field names unique (Java's RowType refuses duplicates) (PAIMON-SCHEMA-004)."""
    out = []
    for owner, fields in [("the table", schema.fields)] + [
            (f"ROW {f.name!r}", t.fields) for f in walk(schema.fields) for t in _types(f.type, into_rows=False) if t.root == "ROW"]:
        names = [f.name for f in fields]
        for name in sorted({n for n in names if names.count(n) > 1}):
            out.append(Violation("PAIMON-SCHEMA-004", f"{owner} has more than one field named {name!r}", where))
    return out


def check_keys(schema: TableSchema, where: str = "") -> list[Violation]:
    """Partition and primary keys name top-level fields; the trimmed primary key is non-empty (PAIMON-SCHEMA-002/022)."""
    out = []
    names = set(schema.field_names)
    for kind, keys in (("partition key", schema.partition_keys), ("primary key", schema.primary_keys)):
        for k in keys:
            if k not in names:
                out.append(Violation("PAIMON-SCHEMA-002", f"{kind} {k!r} is not a field of the table", where))
    if schema.primary_keys and not schema.trimmed_primary_keys:
        out.append(Violation("PAIMON-SCHEMA-022", f"primary key {list(schema.primary_keys)} equals the partition keys: "
                             "the trimmed primary key is empty", where))
    return out


def check_map_keys(schema: TableSchema, where: str = "") -> list[Violation]:
    """MAP keys declared NOT NULL (PAIMON-SCHEMA-020: Arrow-based readers refuse nullable keys)."""
    out = []
    for f in walk(schema.fields):  # walk reaches ROW fields itself: each type is looked at once
        for t in _types(f.type, into_rows=False):
            if t.root == "MAP" and t.key is not None and t.key.nullable:
                out.append(Violation("PAIMON-SCHEMA-020", f"field {f.name!r}: MAP key {t.key} is nullable", where))
                break
    return out


def check_bucket(schema: TableSchema, where: str = "") -> list[Violation]:
    """``bucket`` is N > 0, -1 or -2; ``bucket-key`` names non-partition fields, within the primary key (PAIMON-BUCKET-001/003/004)."""
    out = []
    try:
        n = schema.bucket
    except InvalidTable as exc:
        return [Violation("PAIMON-BUCKET-001", exc.message, where)]
    if n == 0 or n < POSTPONE_BUCKET:
        out.append(Violation("PAIMON-BUCKET-001", f"bucket={n}: must be > 0, -1 (dynamic/unaware) or -2 (postpone)", where))
    raw = schema.options.get(BUCKET_KEY)
    if raw is not None and raw.strip():
        keys = raw.split(",")
        for k in keys:
            if k not in schema.field_names:
                out.append(Violation("PAIMON-BUCKET-004", f"bucket-key {k!r} is not a field of the table", where))
            elif k in schema.partition_keys:
                out.append(Violation("PAIMON-BUCKET-004", f"bucket-key {k!r} is a partition key", where))
            elif schema.primary_keys and k not in schema.primary_keys:
                out.append(Violation("PAIMON-BUCKET-004", f"bucket-key {k!r} is not part of the primary key", where))
    elif n > 0 and not schema.primary_keys:
        out.append(Violation("PAIMON-BUCKET-003", f"append table with bucket={n} has no bucket-key", where))
    return out


def check_options(schema: TableSchema, where: str = "") -> list[Violation]:
    """Option values written as JSON strings, enumerated options holding one of their values (PAIMON-SCHEMA-010)."""
    out = [Violation("PAIMON-SCHEMA-010", f"option {k!r} is not written as a JSON string", where) for k in schema.non_string_options]
    for key in ENUM_VALUES:
        if key in schema.options:
            try:
                schema.enum_option(key)
            except InvalidTable as exc:
                out.append(Violation("PAIMON-SCHEMA-010", exc.message, where))
    return out


def validate_schema(schema: TableSchema, where: str = "") -> list[Violation]:
    """Every schema-level check above, in one list."""
    out: list[Violation] = []
    for check in (check_field_ids, check_field_names, check_keys, check_map_keys, check_bucket, check_options):
        out.extend(check(schema, where))
    return out


def check_schema_history(schemas: list[TableSchema], where: str = "") -> list[Violation]:
    """Across versions: partition and primary keys never change; ``highestFieldId`` never decreases (PAIMON-SCHEMA-006/008/009)."""
    out = []
    for prev, cur in zip(schemas, schemas[1:]):
        if cur.partition_keys != prev.partition_keys:
            out.append(Violation("PAIMON-SCHEMA-008", f"schema {cur.id} changes partitionKeys {list(prev.partition_keys)} -> {list(cur.partition_keys)}", where))
        if cur.primary_keys != prev.primary_keys:
            out.append(Violation("PAIMON-SCHEMA-009", f"schema {cur.id} changes primaryKeys {list(prev.primary_keys)} -> {list(cur.primary_keys)}", where))
        if cur.highest_field_id < prev.highest_field_id:
            out.append(Violation("PAIMON-SCHEMA-006", f"schema {cur.id} lowers highestFieldId {prev.highest_field_id} -> {cur.highest_field_id}", where))
    return out


__all__ = ["TableSchema", "parse_schema", "schema_to_dict", "schema_ids", "load_schema", "list_schemas", "latest_schema",
           "validate_schema", "check_field_ids", "check_field_names", "check_keys", "check_map_keys", "check_bucket",
           "check_options", "check_schema_history", "OPTION_DEFAULTS", "ENUM_VALUES", "CURRENT_VERSION"]
