"""Relays of what the strict parsers refused while the context read the table, one named check per kind of
file. The parsers (``reference_impl.hudi.properties``, ``timeline``, ``commit_metadata``, ``naming``,
``logfile``) are where these rules are enforced byte by byte; each relay passes their findings on under
the rule the parser named. Registered after the other checks, so ``CHECKS`` names a dedicated check for a
rule wherever one exists."""

from __future__ import annotations

from typing import Iterator

from reference_impl.common.validation import Violation
from reference_impl.hudi.validate.context import Context
from reference_impl.hudi.validate.registry import check


def _of(ctx: Context, kind: str) -> Iterator[Violation]:
    return (v for k, v in ctx.errors if k == kind)


@check("LAYOUT-002", "LAYOUT-016", relay=True)
def properties_syntax(ctx: Context) -> Iterator[Violation]:
    """``hoodie.properties`` (and the metadata table's) is a Java properties file that loads."""
    yield from _of(ctx, "properties")


@check("TIMELINE-003", "TIMELINE-006", "TIMELINE-007", "TIMELINE-008", "TIMELINE-009", "TIMELINE-011",
       "TIMELINE-012", "TIMELINE-013", relay=True)
def timeline_file_names(ctx: Context) -> Iterator[Violation]:
    """Every instant-shaped file of the active timeline has a known action, a state suffix of its layout, valid
    times, and a completion time only when completed in layout 2."""
    yield from _of(ctx, "timeline-name")


@check("TIMELINE-016", "TIMELINE-017", "TIMELINE-018", "COMMIT-001", "COMMIT-002", relay=True)
def timeline_file_contents(ctx: Context) -> Iterator[Violation]:
    """Every plan and every completed file decodes (Avro plans; JSON or Avro commit metadata of the right shape;
    Avro clean, rollback, savepoint, restore and indexing metadata)."""
    yield from _of(ctx, "timeline-content")


@check("TIMELINE-021", "TIMELINE-022", "TIMELINE-023", relay=True)
def archived_timeline(ctx: Context) -> Iterator[Violation]:
    """The v6 archive decodes as Hudi log files of archived entries; the v8+ LSM history has a readable
    ``_version_``, its manifest, and every listed ``<min>_<max>_<level>.parquet`` of the listed size and columns."""
    yield from _of(ctx, "archive")


@check("FILE-001", "FILE-004", "FILE-005", "FILE-006", "FILE-008", relay=True)
def data_file_names(ctx: Context) -> Iterator[Violation]:
    """Files with a base extension are ``<fileId>_<writeToken>_<instant>.<ext>``; hidden ``.log.`` files are
    ``.<fileId>_<instant>.log.<version>_<writeToken>`` with version >= 1."""
    yield from _of(ctx, "file-name")


@check("LAYOUT-015", relay=True)
def partition_metafiles(ctx: Context) -> Iterator[Violation]:
    """Each ``.hoodie_partition_metadata`` holds ``commitTime`` and the partition's ``partitionDepth``."""
    yield from _of(ctx, "partition-metafile")


@check("LAYOUT-010", relay=True)
def base_file_contents(ctx: Context) -> Iterator[Violation]:
    """Every Parquet base file opens as Parquet."""
    yield from _of(ctx, "base-file")


@check("LOG-001", "LOG-003", "LOG-004", "LOG-005", "LOG-006", "LOG-008", "LOG-010", relay=True)
def log_file_framing(ctx: Context) -> Iterator[Violation]:
    """Every log file starts with ``#HUDI#``; every block has log format version 1, a known block type, a header
    and footer map that decode, content that ends where the block does, and (data and delete blocks) content
    that decodes."""
    yield from _of(ctx, "log-file")
