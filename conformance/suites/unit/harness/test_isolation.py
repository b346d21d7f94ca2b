"""Isolation: an engine that segfaults or hangs costs one cell, the run goes on."""

from __future__ import annotations

import io
import os
import signal
import time

import pyarrow as pa
import pytest

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


class Remote(Engine):
    """An engine driven through a worker, as a Spark line of another interpreter is."""

    name = "remote"

    def __init__(self, flavour: str = "plain"):
        self.flavour = flavour

    def version(self):
        return f"remote {self.flavour}"

    def capabilities(self):
        return Capabilities(read=frozenset({"fake"}), write=frozenset({"fake"}), read_features={"fake": None},
                            write_steps={"fake": frozenset({"Create"})}, unsupported={"fake": {"x": "no x"}})

    def read(self, table, *, at=None, timestamp=None, ref=None, columns=None):
        from reference_impl.errors import InvalidTable, Unsupported

        if table.uri.endswith("invalid"):
            raise InvalidTable("broken here")
        if table.uri.endswith("unsupported"):
            raise Unsupported("needs y", feature="y")
        if table.uri.endswith("boom"):
            raise KeyError("boom")
        if table.uri.endswith("pid"):  # which worker answered, after a while (to see calls overlap)
            time.sleep(0.5)
            return pa.table({"pid": [os.getpid()]})
        return pa.table({"at": [at], "ref": [ref], "flavour": [self.flavour]})

    def write(self, table, steps):
        with open(table.uri, "w") as fh:
            fh.write(",".join(type(s).__name__ for s in steps))


def test_remote_engine_forwards_every_call_and_keeps_error_kinds(tmp_path):
    from conformance.isolation import RemoteEngine, RemoteError
    from conformance.model import Create
    from reference_impl.errors import InvalidTable, Unsupported

    engine = RemoteEngine("remote", ("class", f"{__name__}:Remote", {"flavour": "kw"}), python=None)
    try:
        assert engine.available() is None and engine.version() == "remote kw" and engine.in_process
        assert engine.capabilities().reason("fake", "x") == "no x"
        got = engine.read(TableRef(format="fake", uri="/t/ok"), at=2, ref="dev")
        assert got.to_pylist() == [{"at": 2, "ref": "dev", "flavour": "kw"}]
        with pytest.raises(InvalidTable, match="broken here"):
            engine.read(TableRef(format="fake", uri="/t/invalid"))
        with pytest.raises(Unsupported, match="needs y") as info:
            engine.read(TableRef(format="fake", uri="/t/unsupported"))
        assert info.value.feature == "y"
        with pytest.raises(RemoteError, match="KeyError: 'boom'"):
            engine.read(TableRef(format="fake", uri="/t/boom"))
        target = tmp_path / "written"
        engine.write(TableRef(format="fake", uri=str(target)), [Create(schema=pa.schema([("x", pa.int64())]))])
        assert target.read_text() == "Create"
    finally:
        engine.close()


def _side_by_side(engine, jobs) -> float:
    """Start ``engine``, run each of ``jobs`` in a thread of its own at once; the seconds they took."""
    import threading

    try:
        engine.start()  # every worker up before the timing
        threads = [threading.Thread(target=job) for job in jobs]
        began = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.monotonic() - began
    finally:
        engine.close()


def _pids(engine, out: list[int]):
    """A job of two half-second reads that records which process answered each."""
    def job() -> None:
        for _ in range(2):
            out.append(engine.read(TableRef(format="fake", uri="/t/pid")).column("pid")[0].as_py())
    return job


def test_remote_engine_with_workers_answers_side_by_side_each_thread_from_its_own_worker():
    from conformance.isolation import RemoteEngine

    engine = RemoteEngine("remote", ("class", f"{__name__}:Remote"), python=None, workers=2)
    a: list[int] = []
    b: list[int] = []
    assert engine.concurrency == 2
    elapsed = _side_by_side(engine, [_pids(engine, a), _pids(engine, b)])
    # Each thread kept to one worker, the two threads to different ones, and their calls overlapped
    # (four half-second reads, two at a time: about one second, never the two seconds of one worker).
    assert len(set(a)) == 1 and len(set(b)) == 1 and a[0] != b[0]
    assert elapsed < 1.8, elapsed


class TwoAtOnce(Remote):
    """An engine that takes two calls at once in its one process (as a Spark JVM takes two reads)."""

    concurrency = 2


def test_remote_engine_with_calls_answers_two_calls_side_by_side_in_one_worker():
    from conformance.isolation import RemoteEngine

    engine = RemoteEngine("remote", ("class", f"{__name__}:TwoAtOnce"), python=None, calls=2)
    pids: list[int] = []
    assert engine.concurrency == 2
    elapsed = _side_by_side(engine, [_pids(engine, pids), _pids(engine, pids)])
    # One process answered all four half-second reads, two at a time (about one second; one at a
    # time, as a worker whose engine takes one call does, would be two).
    assert len(pids) == 4 and len(set(pids)) == 1 and pids[0] != os.getpid()
    assert elapsed < 1.8, elapsed


def test_a_worker_whose_engine_takes_one_call_answers_one_at_a_time():
    from conformance.isolation import RemoteEngine

    # Asking for two calls does not make an engine that takes one (the default) thread-safe.
    engine = RemoteEngine("remote", ("class", f"{__name__}:Remote"), python=None, calls=2)
    pids: list[int] = []
    assert _side_by_side(engine, [_pids(engine, pids), _pids(engine, pids)]) >= 1.9
    assert len(set(pids)) == 1


def test_lane_runs_an_engine_of_concurrency_two_two_jobs_at_a_time_after_its_start():
    import threading

    from conformance.runner import Lane, Pending

    class Two(Remote):
        concurrency = 2

    errors: list[BaseException] = []
    pending = Pending()
    lane = Lane(Two(), serial=False, errors=errors, pending=pending)
    order: list[str] = []
    lock = threading.Lock()
    running = [0, 0]  # now, most at once

    def job(name: str, seconds: float):
        def run_it():
            with lock:
                running[0] += 1
                running[1] = max(running[1], running[0])
            time.sleep(seconds)
            with lock:
                running[0] -= 1
                order.append(name)
        return run_it

    lane.submit(job("start", 0.3))
    for i in range(4):
        lane.submit(job(f"job{i}", 0.2))
    pending.wait()
    lane.stop()
    assert not errors and order[0] == "start"  # the start ran alone, before any job
    assert running[1] == 2 and sorted(order[1:]) == ["job0", "job1", "job2", "job3"]


def test_remote_engine_without_an_interpreter_says_how_to_get_one():
    from conformance.isolation import RemoteEngine

    engine = RemoteEngine("far", ("class", f"{__name__}:Remote"), python=None, unavailable="run the setup command")
    assert engine.available() == "run the setup command" and engine.capabilities().read == frozenset()
