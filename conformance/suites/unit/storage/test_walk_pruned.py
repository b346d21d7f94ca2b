"""``Storage.walk_pruned``: a walk that leaves named directories out, the local fast path equal to the
generic filter over ``walk`` (the one every other store uses)."""

from __future__ import annotations

import pytest

from reference_impl.storage import LocalStorage, Storage

FILES = ["a/x.parquet", "a/.hoodie/hoodie.properties", "a/.hoodie/timeline/1.commit", "a/.hoodiex/keep",
         "a/c/.hoodie/nested", "a/c/y.parquet", "b/.hoodie/other", "top.txt"]


@pytest.fixture
def local(tmp_path):
    for rel in FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"1")
    return LocalStorage(str(tmp_path))


@pytest.mark.parametrize("prefix", ["", "a", "a/", "b"])
@pytest.mark.parametrize("prune", [(), (".hoodie",), (".hoodie/",), (".hoodie", "c")])
def test_local_fast_path_equals_the_generic_filter(local, prefix, prune):
    fast = [f.path for f in local.walk_pruned(prefix, prune)]
    generic = [f.path for f in Storage.walk_pruned(local, prefix, prune)]
    assert fast == generic


def test_only_the_named_directory_under_the_prefix_is_left_out(local):
    got = [f.path for f in local.walk_pruned("a", (".hoodie",))]
    # a sibling that merely starts with the name, and a deeper directory of the same name, stay
    assert got == ["a/.hoodiex/keep", "a/c/.hoodie/nested", "a/c/y.parquet", "a/x.parquet"]
    assert [f.path for f in local.walk_pruned("a")] == [f.path for f in local.walk("a")]
