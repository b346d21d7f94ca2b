"""Isolation: an engine that segfaults or hangs costs one cell, the run goes on."""

from __future__ import annotations

import io
import os
import signal
import time

import pyarrow as pa

from conformance.engines.base import Capabilities, Engine
from conformance.isolation import EngineWorker, engine_spec
from conformance.model import Case, Expected, TableRef
from conformance.runner import run
from conformance.storage import open_store

ROWS = pa.table({"x": pa.array([1], pa.int64())})


class Moody(Engine):
    """Answers by the table's uri: 'ok', 'segv' (dies by SIGSEGV), 'hang' (sleeps)."""

    name = "moody"

    def version(self):
        return "0"

    def capabilities(self):
        return Capabilities(read=frozenset({"fake"}), read_features={"fake": None})

    def read(self, table, *, at=None, timestamp=None, columns=None):
        if table.uri.endswith("segv"):
            os.kill(os.getpid(), signal.SIGSEGV)
        if table.uri.endswith("hang"):
            time.sleep(60)
        return ROWS


CASE = Case(id="fake/c", format="fake", description="", rules=(), steps=(), expected=(Expected(rows=ROWS),))


def test_spec_for_importable_class_and_not_for_locals():
    assert engine_spec(Moody()) == ("class", f"{__name__}:Moody")

    class Local(Moody):
        pass

    assert engine_spec(Local()) is None
    from conformance.engines.registry import load_engines

    assert engine_spec(load_engines(["duckdb"])[0]) == ("name", "duckdb")


def test_crash_and_hang_are_errors_and_the_worker_restarts():
    w = EngineWorker("moody", ("class", f"{__name__}:Moody"), timeout=3)
    try:
        assert w.check(CASE, CASE.expected[0], TableRef(format="fake", uri="/t/ok"))[0] == "pass"
        status, message, _ = w.check(CASE, CASE.expected[0], TableRef(format="fake", uri="/t/segv"))
        assert status == "error" and "crashed (signal SIGSEGV)" in message
        status, message, _ = w.check(CASE, CASE.expected[0], TableRef(format="fake", uri="/t/hang"))
        assert status == "error" and "did not answer within 3s" in message
        assert w.check(CASE, CASE.expected[0], TableRef(format="fake", uri="/t/ok"))[0] == "pass"
    finally:
        w.close()


class SegvWriter(Engine):
    name = "segv-writer"

    def version(self):
        return "0"

    def capabilities(self):
        return Capabilities(write=frozenset({"fake"}))

    def read(self, table, **kw):  # pragma: no cover
        raise AssertionError

    def write(self, table, steps):
        pass


def test_run_survives_a_segfaulting_reader(tmp_path):
    # The store puts tables at <base>/<writer>/<format>/<slug>: name the case so its uri ends in "segv".
    bad = Case(id="fake/segv", format="fake", description="", rules=(), steps=(), expected=(Expected(rows=ROWS),))
    good = Case(id="fake/ok", format="fake", description="", rules=(), steps=(), expected=(Expected(rows=ROWS),))
    out = run([bad, good], [SegvWriter(), Moody()], store=open_store("local", str(tmp_path)),
              isolate=True, progress_stream=io.StringIO())
    got = {r.case: (r.status, r.message) for r in out.results}
    assert got["fake/segv"][0] == "error" and "crashed" in got["fake/segv"][1]
    assert got["fake/ok"] == ("pass", "")
    assert out.document["isolated"] == ["moody"]
