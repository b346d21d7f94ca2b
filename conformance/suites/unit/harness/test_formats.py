"""Format detection and partition expressions: the two places the harness meets format names."""

from __future__ import annotations

import pytest

from conformance.cli import main
from conformance.model import parse_partition_expr
from reference_impl import formats
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.storage import open_storage


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("id", ("identity", "id", None)),
        ("bucket(16, id)", ("bucket", "id", 16)),
        ("truncate(4,s)", ("truncate", "s", 4)),
        ("DAY(ts)", ("day", "ts", None)),
        (" void( x ) ", ("void", "x", None)),
    ],
)
def test_partition_expressions_parse(text, parsed):
    assert parse_partition_expr(text) == parsed


@pytest.mark.parametrize("text", ["zorder(x)", "bucket(x)", "day(3, x)", "a b", "bucket(16, x", ""])
def test_malformed_partition_expressions_are_refused_by_name(text):
    with pytest.raises(ValueError):
        parse_partition_expr(text)


def _touch(root, rel: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(b"{}")


def test_detect_by_the_metadata_file_each_spec_requires(tmp_path):
    _touch(tmp_path / "d", "_delta_log/00000000000000000000.json")
    _touch(tmp_path / "i", "metadata/v1.metadata.json")
    _touch(tmp_path / "c", "metadata/00003-6f1c0f4e-1c1b-4a57-9d1a-1b2c3d4e5f60.metadata.json")
    assert formats.detect(open_storage(str(tmp_path / "d"))) == "delta"
    assert formats.detect(open_storage(str(tmp_path / "i"))) == "iceberg"
    assert formats.detect(open_storage(str(tmp_path / "c"))) == "iceberg"


def test_detect_refuses_nothing_and_ambiguity(tmp_path):
    _touch(tmp_path / "none", "metadata/notes.txt")  # a directory called metadata is not enough
    with pytest.raises(InvalidTable, match="no table format recognised"):
        formats.detect(open_storage(str(tmp_path / "none")))
    _touch(tmp_path / "both", "_delta_log/00000000000000000000.json")
    _touch(tmp_path / "both", "metadata/v1.metadata.json")
    with pytest.raises(InvalidTable, match="several formats"):
        formats.detect(open_storage(str(tmp_path / "both")))
    with pytest.raises(Unsupported):
        formats.get("orc")


def test_cli_names_an_unrecognised_location(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["validate", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lakeconf: unknown format:") and "_delta_log" in err and "metadata" in err
