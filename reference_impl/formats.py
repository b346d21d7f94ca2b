"""Which table format lives at a location, and where the reference keeps each format's entry points.

The command line and the harness ask this table instead of knowing formats themselves: a format
is recognised by a file its spec requires (Delta: a commit or checkpoint under ``_delta_log/``;
Iceberg: a metadata file under ``metadata/``), and reached through the reader and validator named
here. A new format adds one entry.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from reference_impl.errors import InvalidTable, Unsupported


@dataclass(frozen=True, slots=True)
class Format:
    name: str
    directory: str  # the directory the spec puts the table's metadata in
    suffixes: tuple[str, ...]  # a file ending so in that directory marks the format
    reader: str  # "module:function" -> read_table(storage, *, version=..., columns=...)
    validator: str  # "module:function" -> validate_table(storage) -> list of violations

    def load(self, which: str) -> Callable[..., Any]:
        module, _, name = getattr(self, which).partition(":")
        return getattr(importlib.import_module(module), name)


FORMATS: tuple[Format, ...] = (
    Format("delta", "_delta_log", (".json", ".checkpoint.parquet", ".parquet"),
           "reference_impl.delta.table:read_table", "reference_impl.delta.validate:validate_table"),
    Format("iceberg", "metadata", (".metadata.json", ".metadata.json.gz", ".gz.metadata.json", "version-hint.text"),
           "reference_impl.iceberg.table:read_table", "reference_impl.iceberg.validate:validate_table"),
)


def get(name: str) -> Format:
    for f in FORMATS:
        if f.name == name:
            return f
    raise Unsupported(f"unknown table format {name!r} (known: {', '.join(f.name for f in FORMATS)})")


def detect(storage: Any) -> str:
    """The one format whose metadata directory holds a marker file; InvalidTable if none or several."""
    found = []
    for f in FORMATS:
        names = storage.list(f.directory)
        if any(info.path.endswith(f.suffixes) for info in names):
            found.append(f.name)
    if len(found) == 1:
        return found[0]
    if not found:
        wanted = "; ".join(f"{f.name}: {f.directory}/*{f.suffixes[0]}" for f in FORMATS)
        raise InvalidTable(f"no table format recognised (looked for {wanted})")
    raise InvalidTable(f"the location holds metadata of several formats ({', '.join(found)}); point at one table")
