"""Iceberg tables that broke the kit's promise in the hostile-input run, each now refused by name."""

from __future__ import annotations

import gzip
import os
import shutil

import pytest

from conformance.formats.iceberg.strategies import build_table
from reference_impl.errors import Internal, InvalidTable
from reference_impl.iceberg.table import current_metadata_path, hint_version, read_table
from reference_impl.iceberg.validate import validate_table
from reference_impl.storage import LocalStorage


@pytest.fixture
def table(tmp_path):
    return build_table(str(tmp_path / "t"), 2)


def _hint(t, text: bytes) -> None:
    with open(t.path("metadata/version-hint.text"), "wb") as fh:
        fh.write(text)


@pytest.mark.rule("ICEBERG-META-001")
def test_a_version_hint_is_only_where_to_start(table):
    """A number, or the file name some writers put there, both probe forward to the newest version;
    a Unicode digit, a huge number or anything else falls back to listing: never a ValueError."""
    newest = table.current
    storage = LocalStorage(table.root)
    for text in (b"1", b"v1.metadata.json", "²".encode(), "١".encode(), b"9" * 5000, b"-1", b"../v1.metadata.json", b""):
        _hint(table, text)
        assert current_metadata_path(storage) == newest, text
    assert hint_version("²") is None and hint_version("v12.metadata.json") == 12 and hint_version("0012") == 12
    assert read_table(table.root).num_rows > 0


@pytest.mark.rule("ICEBERG-META-044")
def test_gzip_metadata_is_inflated_within_bounds(table, monkeypatch):
    doc = open(table.path(table.current), "rb").read()
    with open(table.path(table.current), "wb") as fh:
        fh.write(gzip.compress(doc))
    assert read_table(table.root).num_rows > 0  # compressed metadata is fine ...
    monkeypatch.setenv("LAKECONF_MAX_INFLATE_BYTES", str(len(doc) - 1))
    with pytest.raises(InvalidTable, match="inflates to more than") as exc:  # ... within the limit
        read_table(table.root)
    assert exc.value.rule == "ICEBERG-META-044" and "LAKECONF_MAX_INFLATE_BYTES" in str(exc.value)
    monkeypatch.delenv("LAKECONF_MAX_INFLATE_BYTES")
    with open(table.path(table.current), "wb") as fh:  # valid JSON whose parse would multiply it
        fh.write(gzip.compress(b"[" + b"[]," * 3_000_000 + b"[]]"))
    monkeypatch.setenv("LAKECONF_MAX_PARSE_BYTES", str(64 << 20))
    with pytest.raises(InvalidTable, match="to parse"):
        read_table(table.root)


def test_a_data_file_parquet_cannot_decode_is_an_invalid_table(table):
    path = table.path(table.files["a"])
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2: len(data) // 2 + 64] = b"\xff" * 64
    with open(path, "wb") as fh:
        fh.write(bytes(data))
    with pytest.raises(InvalidTable, match="not readable Parquet"):
        read_table(table.root)


def test_links_out_of_the_root_are_refused(table, tmp_path):
    outside = tmp_path / "outside"
    shutil.copytree(table.root, outside)
    for rel in (table.files["a"], table.current, "metadata"):
        target = table.path(rel)
        shutil.rmtree(target) if os.path.isdir(target) else os.remove(target)
        os.symlink(outside / rel, target)
        with pytest.raises(InvalidTable, match="symbolic link"):
            read_table(table.root)
        with pytest.raises(InvalidTable, match="symbolic link"):
            validate_table(table.root)
        os.remove(target)
        (shutil.copytree if os.path.isdir(outside / rel) else shutil.copy)(outside / rel, target)
    assert read_table(table.root).num_rows > 0


def test_a_crashing_check_is_an_internal_error_not_a_rule(table, monkeypatch, capsys):
    """The validator's own bug is kind internal (the command line exits 2), never a violation (exit 1)."""
    from conformance.cli import main
    from reference_impl.iceberg.validate.registry import REGISTRY

    def boom(ctx):
        raise KeyError("a bug")

    monkeypatch.setattr(REGISTRY, "functions", [boom] + list(REGISTRY.functions))
    with pytest.raises(Internal, match=r"1 validator check\(s\) crashed: boom \(KeyError") as exc:
        validate_table(table.root)
    assert isinstance(exc.value.__cause__, KeyError)
    assert main(["validate", table.root]) == 2
    assert capsys.readouterr().err.startswith("lakeconf: internal error: ")
