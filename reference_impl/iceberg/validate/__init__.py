"""Table validation: name every rule of the Iceberg table spec (rules/iceberg.md) that a table breaks.

``validate_table(location)`` reads the raw table once (``context.Context``: the current metadata
JSON and the earlier ones its metadata-log names that still exist, every listed snapshot's
manifest list, the manifests, and the data and delete files they list) and then runs every
registered check, a named pure function over that context. A table that is merely invalid
never makes it raise: each finding is a ``Violation(rule, message, where)``, ``where`` being the
root-relative file and the spot in it. A file the strict readers refuse is reported with the
rule it broke; when a structural check already named what is wrong with that file, the reader's
own complaint (usually the same defect seen from the reader) is left out.

``CHECKS`` maps each rule id to the check function that can report it, so the harness can count
which rules have an executable check.
"""

from __future__ import annotations

from typing import Any

from reference_impl.common.validation import Violation
from reference_impl.iceberg.validate.registry import CHECK_FUNCTIONS, CHECKS, REGISTRY, rid
from reference_impl.iceberg.validate import (  # noqa: F401  (importing registers the checks)
    checks_metadata,
    checks_history,
    checks_manifests,
    checks_files,
    checks_deletes,
)
from reference_impl.iceberg.validate.context import Context, open_table

__all__ = ["Violation", "validate_table", "CHECKS", "CHECK_FUNCTIONS", "RULES_CHECKED"]

RULES_CHECKED: frozenset[str] = frozenset(CHECKS)

# Structural findings that explain why a strict reader refused the same file (its own complaint is then redundant).
EXPLAINS: frozenset[str] = frozenset(rid(r) for r in (
    # metadata JSON
    "META-003", "META-005", "META-008", "META-010", "META-013", "META-015", "META-017", "META-019", "META-020",
    "META-022", "META-023", "META-024", "META-026", "META-037", "META-038", "META-042", "SERDE-025", "META-028",
    "SEQ-001", "SNAP-004", "SNAP-006", "SNAP-010", "PART-036",
    # Avro files
    "MLIST-002", "MANIFEST-002", "FMT-006", "FMT-001", "FMT-003", "GEN-001", "MLIST-003", "MLIST-004", "MLIST-005",
    "MLIST-006", "MLIST-007", "MLIST-008", "MLIST-009", "MLIST-010", "MLIST-011", "MLIST-014", "MANIFEST-004",
    "MANIFEST-005", "MANIFEST-006", "MANIFEST-007", "MANIFEST-008", "MANIFEST-009", "MANIFEST-010", "MANIFEST-011",
    "MANIFEST-013", "MANIFEST-017", "MANIFEST-018", "MANIFEST-019", "MANIFEST-020", "MANIFEST-021", "MANIFEST-022",
    "MANIFEST-023",
))


def _file_of(where: str) -> str:
    return where.split(": ", 1)[0]


def validate_table(location: Any, *, metadata_location: str | None = None) -> list[Violation]:
    """Every rule violation of the table at ``location`` (path, URI, Storage or a metadata file's path), in a stable order.

    ``metadata_location`` picks the current metadata file (what a catalog points at); by default it
    is the highest-numbered file under ``metadata/``. A location without any metadata file is not a
    table: ``InvalidTable``.
    """
    ctx = open_table(location, metadata_location)
    return run_checks(ctx)


def run_checks(ctx: Context) -> list[Violation]:
    """Run every registered check over a context; blockers last, dropped where a structural finding explains them."""
    return REGISTRY.run(ctx, explains=EXPLAINS, file_of=_file_of)
