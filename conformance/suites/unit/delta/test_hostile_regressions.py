"""Delta tables that broke the kit's promise in the hostile-input run, each now refused by name."""

from __future__ import annotations

import os
import shutil

import pyarrow as pa
import pytest

from reference_impl.delta.table import read_table
from reference_impl.delta.validate import validate_table
from reference_impl.errors import InvalidTable

from . import LogBuilder, metadata, protocol, remove


@pytest.fixture
def table(tmp_path):
    b = LogBuilder(tmp_path / "t")
    b.commit(0, [protocol(), metadata()])
    a1, a2 = b.data_file(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]})), \
        b.data_file(pa.table({"id": pa.array([3, 4], pa.int64()), "name": ["c", "d"]}))
    b.commit(1, [a1, a2])
    return b, a1


@pytest.mark.rule("DELTA-ACTION-017")
def test_a_remove_that_escapes_the_root_refuses_the_table(table):
    """It cannot cancel the add it names, so reading on would bring the removed file back."""
    b, a1 = table
    for bad in ("../" + a1.path, "file:///elsewhere/" + a1.path, "%2E%2E/" + a1.path):
        b.commit(2, [remove(bad)])
        with pytest.raises(InvalidTable, match="outside|escapes") as exc:
            read_table(b.root)
        assert exc.value.rule == "DELTA-ACTION-017"
        os.remove(os.path.join(b.root, "_delta_log", "00000000000000000002.json"))
    assert read_table(b.root).num_rows == 4


@pytest.mark.rule("DELTA-LOG-006")
def test_an_empty_commit_file_is_a_torn_write_not_an_empty_commit(table):
    b, _ = table
    b.raw(2, b"")
    with pytest.raises(InvalidTable, match="holds no action") as exc:
        read_table(b.root)
    assert exc.value.rule == "DELTA-LOG-006" and exc.value.version == 2
    assert "DELTA-LOG-006" in {v.rule for v in validate_table(b.root)}
    b.raw(2, b"\n  \n")
    with pytest.raises(InvalidTable, match="holds no action"):
        read_table(b.root)


@pytest.mark.rule("DELTA-LOG-005", "DELTA-CKPT-027")
def test_deep_nesting_is_invalid_json_not_a_recursion_error(table):
    b, _ = table
    b.raw(2, b'{"commitInfo": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n")
    with pytest.raises(InvalidTable, match="nests JSON deeper") as exc:
        read_table(b.root)
    assert exc.value.rule == "DELTA-LOG-005"
    assert "DELTA-LOG-005" in {v.rule for v in validate_table(b.root)}
    os.remove(os.path.join(b.root, "_delta_log", "00000000000000000002.json"))
    from reference_impl.delta.log import parse_last_checkpoint

    with pytest.raises(InvalidTable, match="nests JSON deeper") as exc:
        parse_last_checkpoint(b'{"version": ' + b"[" * 100_000 + b"]" * 100_000 + b', "size": 1}')
    assert exc.value.rule == "DELTA-CKPT-027"


def test_links_out_of_the_root_are_refused_for_every_file_and_the_log(table, tmp_path):
    b, a1 = table
    outside = tmp_path / "outside"
    shutil.copytree(b.root, outside)
    commit = os.path.join(b.root, "_delta_log", "00000000000000000001.json")
    for rel in (a1.path, "_delta_log/00000000000000000001.json"):
        os.remove(os.path.join(b.root, rel))
        os.symlink(outside / rel, os.path.join(b.root, rel))
        with pytest.raises(InvalidTable, match="symbolic link"):
            read_table(b.root)
        with pytest.raises(InvalidTable, match="symbolic link"):
            validate_table(b.root)
        os.remove(os.path.join(b.root, rel))
        shutil.copy(outside / rel, os.path.join(b.root, rel))
    log = os.path.join(b.root, "_delta_log")
    shutil.rmtree(log)
    os.symlink(outside / "_delta_log", log)
    with pytest.raises(InvalidTable, match="symbolic link"):
        read_table(b.root)
    assert os.path.exists(commit)  # through the link: the content is there, the kit just will not read it


def test_a_link_inside_the_root_is_followed(table):
    b, a1 = table
    os.rename(os.path.join(b.root, a1.path), os.path.join(b.root, "moved.parquet"))
    os.symlink(os.path.join(b.root, "moved.parquet"), os.path.join(b.root, a1.path))
    assert read_table(b.root).num_rows == 4
