"""Hostile input: every format's mutants read and validated with only the named error kinds, nothing
from outside the table root, peak memory under 1 GiB, no hang, no crash (``conformance.hostile``).

The campaign size follows the hypothesis profile (dev 60, ci 1,000, thorough 10,000 mutants per
format; ``LAKECONF_HOSTILE_MUTANTS`` overrides). A break keeps its mutant under the test's tmp
directory and names it in the failure.
"""

from __future__ import annotations

import os
import shutil

import pytest

from conformance import hostile as H

FORMATS = H.formats_with_spec()


@pytest.mark.rule("DELTA-ACTION-017", "ICEBERG-META-001")
@pytest.mark.parametrize("fmt", FORMATS)
def test_no_mutant_breaks_the_promise(fmt, tmp_path):
    n = H.mutants_for_profile()
    report = H.campaign([fmt], n, str(tmp_path / "work"), keep=str(tmp_path / "breaks"))
    print(H.render(report))
    assert report.mutants == n
    # every file kind the format declares was mutated, and every mutation that applies was drawn
    kinds = {k for (_f, k, _o) in report.by_kind}
    if n >= 500:
        assert {k.name for k in H.spec_of(fmt).kinds} <= kinds | {"checkpoint_json"}, kinds
    assert not report.breaks, H.render(report)


# --------------------------------------------------------------------------------------------
# The detectors themselves can fail: an outside read, a refusal that is not a named kind, memory.


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-seeds")
    return {fmt: H.build_seeds(fmt, H.spec_of(fmt), str(root / fmt)) for fmt in FORMATS}


def _mutant_with_link(fmt, seeds, tmp_path, pick):
    """Restore a seed, then make the file ``pick`` chooses a link to its copy outside the root."""
    case = sorted(seeds[fmt])[0]
    root, pristine = seeds[fmt][case]
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(pristine, root)
    outside = str(tmp_path / "outside")
    shutil.copytree(pristine, outside)
    rel = pick([os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs])
    os.unlink(os.path.join(root, rel))
    os.symlink(os.path.join(outside, rel), os.path.join(root, rel))
    return root, outside, rel


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_link_out_of_the_root_is_refused_and_would_be_seen(fmt, seeds, tmp_path, monkeypatch):
    """The worker refuses the link (invalid table); with the storage's confinement switched off,
    the audit sees the outside read: the promise's check is not vacuous."""
    from conformance.hostile import worker
    from reference_impl.storage import LocalStorage

    spec = H.spec_of(fmt)
    root, outside, rel = _mutant_with_link(fmt, seeds, tmp_path, lambda files: sorted(
        f for f in files if spec.kind_of(f) is not None and spec.kind_of(f).structure in ("json", "ndjson"))[-1])
    with H.Worker() as w:
        out = w.run(fmt, root, outside)
    assert out.read == "invalid_table" and "symbolic link" in out.read_message, out
    assert out.outside == [] and not out.breaks, out

    import sys

    sys.addaudithook(worker._audit)  # permanent for this process, idle outside worker.handle
    monkeypatch.setattr(LocalStorage, "_confine", lambda self, full, path: None)
    answer = worker.handle({"format": fmt, "root": root, "outside": outside})
    assert rel in answer["outside"], answer
    assert H.Outcome(**answer).breaks


def test_an_unnamed_exception_and_an_internal_error_are_breaks():
    assert H.Outcome(read="escaped", read_message="ValueError: x", validate="ok").breaks
    assert H.Outcome(read="ok", validate="internal", validate_message="Internal: check crashed").breaks
    assert H.Outcome(read="invalid_table", validate="unsupported").breaks == []
    assert H.Outcome(read="ok", validate="ok", peak_mb=H.PEAK_MB_LIMIT + 1).breaks
    assert H.Outcome(process="hang").breaks == ["hang"]


@pytest.mark.rule("ICEBERG-META-044")
def test_bombs_are_refused_before_they_are_held(seeds, tmp_path):
    """A GZIP metadata bomb, a JSON of empty arrays that parsing would multiply, an Avro deflate bomb:
    each refused as an invalid table, the worker's peak well under the limit."""
    if "iceberg" not in seeds:
        pytest.skip("no iceberg format registered")
    import random

    root, pristine = seeds["iceberg"]["iceberg/v2-basic-append"]
    outside = str(tmp_path / "outside")
    shutil.copytree(pristine, outside)
    for name in ("gzip", "objects"):
        shutil.rmtree(root)
        shutil.copytree(pristine, root)
        meta = sorted(f for f in os.listdir(os.path.join(root, "metadata")) if f.endswith(".metadata.json"))[-1]
        data = H._gzip_bomb(H._BOMBS) if name == "gzip" else H._gzip_objects(H._BOMBS)
        with open(os.path.join(root, "metadata", meta), "wb") as fh:
            fh.write(data)
        with H.Worker() as w:
            out = w.run("iceberg", root, outside)
        assert out.read == "invalid_table", (name, out)
        assert out.peak_mb < 600, (name, out.peak_mb)
    shutil.rmtree(root)
    shutil.copytree(pristine, root)
    manifest = sorted(f for f in os.listdir(os.path.join(root, "metadata")) if f.endswith("-m0.avro") or f.endswith("-m1.avro"))[0]
    H._avro_bomb(random.Random(0), root, f"metadata/{manifest}", outside)
    with H.Worker() as w:
        out = w.run("iceberg", root, outside)
    assert out.read == "invalid_table" and "inflates to more than" in out.read_message, out
    assert out.peak_mb < 400, out.peak_mb


def test_a_request_runs_under_its_formats_env_and_leaves_it_behind(seeds, monkeypatch):
    """A format's ``HostileSpec.env`` holds for its request only: the worker serves every format in turn."""
    from conformance.hostile import worker
    from reference_impl import formats

    fmt = FORMATS[0]
    _root, pristine = seeds[fmt][sorted(seeds[fmt])[0]]
    monkeypatch.delenv("LAKECONF_TEST_PROBE", raising=False)
    seen = []
    real = formats.get(fmt).load

    class Probe:
        def load(self, which):
            seen.append(os.environ.get("LAKECONF_TEST_PROBE"))
            return real(which)

    monkeypatch.setattr(formats, "get", lambda name: Probe())
    answer = worker.handle({"format": fmt, "root": pristine, "outside": "", "env": {"LAKECONF_TEST_PROBE": "on"}})
    assert seen == ["on", "on"] and answer["read"] == "ok", answer
    assert "LAKECONF_TEST_PROBE" not in os.environ


# --------------------------------------------------------------------------------------------
# lakeconf fuzz: published readers under the same mutants


def test_markers_are_written_and_found(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from conformance.hostile.fuzz import MARK_INT, MARK_TEXT, _mark_parquet, has_marker

    path = str(tmp_path / "f.parquet")
    field = pa.field("id", pa.int64(), metadata={b"PARQUET:field_id": b"1"})
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}).cast(
        pa.schema([field, pa.field("s", pa.string())])), path)
    assert _mark_parquet(path)
    marked = pq.read_table(path)
    assert marked.column("id").to_pylist() == [MARK_INT] * 2 and marked.column("s").to_pylist() == [MARK_TEXT] * 2
    assert marked.schema.field("id").metadata == {b"PARQUET:field_id": b"1"}  # ids kept: id-based readers still match
    assert has_marker(marked) and not has_marker(pa.table({"id": [1], "s": ["a"]}))
    assert has_marker(pa.table({"n": pa.array([{"x": MARK_TEXT}])}))


class NaiveEngine:
    """A reader that does what careless engines do: every data file under the root, links followed.

    Built in the fuzz worker from its class name (``conformance.isolation.engine_spec``)."""

    name = "naive"

    def version(self):
        return "0"

    def capabilities(self):
        from conformance.engines.base import Capabilities

        return Capabilities(read=frozenset(FORMATS), write=frozenset())

    def available(self):
        return None

    def read(self, table, *, at=None, timestamp=None, ref=None, columns=None):
        import pyarrow as pa
        import pyarrow.parquet as pq

        spec = H.spec_of(table.format)
        parts = []
        for dirpath, _dirs, names in os.walk(table.uri, followlinks=True):
            for n in sorted(names):
                rel = os.path.relpath(os.path.join(dirpath, n), table.uri)
                kind = spec.kind_of(rel)
                if kind is not None and kind.name == "data":
                    # the file alone (no partition columns inferred from a Hive-style directory name); a file the
                    # mutant broke is skipped: this reader exists to follow links, not to judge files
                    try:
                        part = pq.ParquetFile(os.path.join(dirpath, n)).read()
                    except (pa.ArrowInvalid, OSError):
                        continue
                    parts.append(part.select([0]).rename_columns(["c"]))
        return pa.concat_tables(parts, promote_options="permissive") if parts else pa.table({})

    def close(self):
        pass


@pytest.mark.parametrize("fmt", FORMATS)
def test_fuzz_reports_a_reader_that_follows_a_link_out_of_the_root(fmt, tmp_path, monkeypatch):
    """A reader that follows a data file's link returns the outside copy's markers: a finding, with
    its reproducer kept; the reference, which refuses the link, has none."""
    import json

    from conformance.engines.reference import ReferenceEngine
    from conformance.hostile import fuzz as F

    def link_a_data_file(fmt_, spec, seeds, index, work, *, seed=0, outside_source=None):
        m = H.make_mutant(fmt_, spec, seeds, index, work, seed=seed, outside_source=outside_source)
        # whatever the mutant did, undo nothing: also make a data file a link to its marked copy
        data = sorted(f for f in H._files(m.root) if (k := spec.kind_of(f)) is not None and k.name == "data"
                      and not os.path.islink(os.path.join(m.root, f)))
        if data:
            os.unlink(os.path.join(m.root, data[0]))
            os.symlink(os.path.join(m.outside, data[0]), os.path.join(m.root, data[0]))
        return m

    monkeypatch.setattr(F, "make_mutant", link_a_data_file)
    report = F.fuzz([NaiveEngine(), ReferenceEngine()], [fmt], 3, str(tmp_path / "work"), str(tmp_path / "out"))
    by_engine = {(x["engine"], x["outcome"]) for x in report.findings}
    assert ("naive", "outside content") in by_engine, report.render()
    assert not any(e == "reference" for e, _o in by_engine), report.render()
    saved = json.load(open(tmp_path / "out" / "findings.json"))
    assert saved["findings"] and os.path.isdir(os.path.join(saved["findings"][0]["reproducer"], "table"))
