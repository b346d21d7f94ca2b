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
