"""Steps only Delta writers run (the shared steps are in ``conformance.model``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from conformance.model import Step

# Table properties that pin a legacy protocol at creation, as delta-spark and delta-rs take them
# (Create.properties): the writer turns them into the protocol action, not into configuration.
MIN_READER_VERSION = "delta.minReaderVersion"
MIN_WRITER_VERSION = "delta.minWriterVersion"


def protocol_properties(reader: int, writer: int) -> dict[str, str]:
    """The Create properties that pin protocol (``reader``, ``writer``)."""
    return {MIN_READER_VERSION: str(reader), MIN_WRITER_VERSION: str(writer)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint(Step):
    """Write a checkpoint of the current version.

    ``kind``: ``classic`` (single file), ``multipart`` (``parts`` files) or ``v2`` (UUID-named,
    with ``sidecars`` sidecar files). ``stats``: which stats columns to write.
    """

    kind: Literal["classic", "multipart", "v2"] = "classic"
    parts: int = 1
    sidecars: int = 0
    stats: tuple[Literal["json", "struct"], ...] = ("json",)
