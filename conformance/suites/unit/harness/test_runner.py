"""The runner's judgement of each cell, with in-memory fake engines (no format, no files)."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pytest

from conformance.engines.base import Capabilities, Engine
from conformance.engines.errors import ErrorPatterns, translate
from conformance.model import Append, Case, Create, Expected, Raw, TableRef
from conformance.report import problems, render_markdown
from conformance.runner import check_cell, failed, run, table_location, verdict
from conformance.storage import open_store
from reference_impl.errors import Internal, InvalidTable, LakeconfError, Unsupported

TABLES: dict[str, list[pa.Table]] = {}  # uri -> rows per version
ROWS = pa.table({"x": pa.array([1, 2], pa.int64())})


class MemWriter(Engine):
    name = "mem-writer"

    def version(self):
        return "1"

    def capabilities(self):
        return Capabilities(write=frozenset({"fake"}), write_steps={"fake": frozenset({"Create", "Append"})})

    def read(self, table, **kw):  # pragma: no cover - not a reader
        raise AssertionError

    def write(self, table, steps):
        versions: list[pa.Table] = []
        for s in steps:
            if isinstance(s, Create):
                versions.append(s.schema.empty_table())
            elif isinstance(s, Append):
                versions.append(pa.concat_tables([versions[-1], s.rows]))
            else:
                raise Unsupported(f"no {type(s).__name__}")
        TABLES[table.uri] = versions


class MemReader(Engine):
    def __init__(self, name, mode="good", caps=None):
        self.name, self.mode, self._caps = name, mode, caps

    def version(self):
        return "1"

    def capabilities(self):
        return self._caps or Capabilities(read=frozenset({"fake"}), read_features={"fake": None})

    def read(self, table, *, at=None, timestamp=None, columns=None):
        versions = TABLES[table.uri]
        if self.mode == "raise":
            raise RuntimeError("kaboom")
        if self.mode == "panic":
            raise BaseException("rust panicked")  # pyo3 PanicException is a BaseException
        if self.mode == "invalid":
            raise InvalidTable("broken log")
        if self.mode == "import":
            raise ModuleNotFoundError("No module named 'myengine_core'")
        if self.mode == "storage":
            raise translate(OSError("Error performing GET http://store/t/x.parquet: HTTP 403 Forbidden"),
                            ErrorPatterns(invalid=("Error performing GET",)))
        if self.mode == "internal":
            raise Internal("the engine's own bug")
        if self.mode == "plain-kit-error":
            raise LakeconfError("engine failed")
        rows = versions[-1 if at is None else at]
        if self.mode == "wrong":
            rows = rows.slice(0, max(rows.num_rows - 1, 0))
        return rows

    def describe(self, table, *, at=None, timestamp=None):
        versions = TABLES[table.uri]
        return {"version": len(versions) - 1 if at is None else at, "configuration": {"a": "1", "b": "2"}}


def case(slug="c", expected=None, features=(), steps=None, writers=None):
    return Case(
        id=f"fake/{slug}", format="fake", description="d", rules=("DELTA-LOG-001",), features=features,
        steps=tuple(steps or (Create(schema=ROWS.schema), Append(rows=ROWS))),
        expected=tuple(expected or (Expected(rows=ROWS),)), writers=writers,
    )


@pytest.fixture
def store(tmp_path):
    return open_store("local", str(tmp_path))


def go(cases, readers, store, writers=None, serial=False):
    return run(cases, [*(writers or [MemWriter()]), *readers], store=store, progress=True, progress_stream=io.StringIO(),
               serial=serial)


def statuses(outcome):
    return {(r.case, r.reader, r.version): (r.status, r.message) for r in outcome.results}


def test_pass_fail_error_and_panic_are_cells_not_crashes(store):
    readers = [MemReader("good"), MemReader("wrong", "wrong"), MemReader("raise", "raise"), MemReader("panic", "panic")]
    out = go([case()], readers, store)
    st = statuses(out)
    assert st[("fake/c", "good", None)][0] == "pass"
    assert st[("fake/c", "wrong", None)][0] == "fail"
    assert "1 expected row(s) missing" in st[("fake/c", "wrong", None)][1]
    assert st[("fake/c", "raise", None)] == ("error", "RuntimeError: kaboom")
    assert st[("fake/c", "panic", None)][0] == "error" and "rust panicked" in st[("fake/c", "panic", None)][1]
    wrong = [r for r in out.results if r.reader == "wrong"][0]
    assert "- (2)" in wrong.diff
    assert failed(out.results)


def test_expected_error_raised_or_silently_returned(store):
    c = case("neg", expected=[Expected(error="invalid_table")])
    st = statuses(go([c], [MemReader("good"), MemReader("raise", "raise"), MemReader("inv", "invalid")], store))
    assert st[("fake/neg", "good", None)][0] == "fail"
    assert "returned 2 row(s) silently" in st[("fake/neg", "good", None)][1]
    assert st[("fake/neg", "inv", None)][0] == "pass"
    assert st[("fake/neg", "inv", None)][1].startswith("raised as expected")


def test_a_passing_cell_says_what_it_checked():
    from conformance.runner import checked

    assert checked(Expected(rows=ROWS, metadata={"a": 1}), "pass") == ["rows", "metadata"]
    assert checked(Expected(rows=ROWS, metadata={"a": 1}), "partial") == ["rows"]
    assert checked(Expected(error="invalid_table"), "pass", "raised as expected: InvalidTable: x") == ["refusal"]
    assert checked(Expected(rows=ROWS, error_allowed="unsupported"), "pass", "refused, which the spec allows: x") == ["refusal"]


@pytest.mark.parametrize("mode", ["raise", "panic", "import", "storage", "internal", "plain-kit-error"])
def test_a_failure_that_is_no_refusal_never_passes_a_negative_case(store, mode):
    """An exception the adapter did not translate into invalid table or unsupported (a crash, an
    import error, a storage failure, the engine's own bug) is an error, not the refusal the case expects."""
    c = case("neg", expected=[Expected(error="invalid_table")])
    allowed = case("allowed", expected=[Expected(rows=ROWS, error_allowed="invalid_table")])
    st = statuses(go([c, allowed], [MemReader("r", mode)], store))
    for cell in (("fake/neg", "r", None), ("fake/allowed", "r", None)):
        assert st[cell][0] == "error", st[cell]
    assert "instead of invalid_table" in st[("fake/neg", "r", None)][1]


def test_expected_error_of_the_wrong_kind_fails(store):
    c = case("neg2", expected=[Expected(error="unsupported")])
    st = statuses(go([c], [MemReader("inv", "invalid")], store))
    assert st[("fake/neg2", "inv", None)][0] == "fail"
    assert "raised invalid_table, expected unsupported" in st[("fake/neg2", "inv", None)][1]


def test_missing_capability_is_unsupported_with_reason(store):
    caps = Capabilities(read=frozenset({"fake"}), read_features={"fake": None},
                        unsupported={"fake": {"deletionVectors": "no DVs here", "time-travel": "latest only"}})
    c = case("dv", features=("deletionVectors",), expected=[Expected(version=1, rows=ROWS)])
    st = statuses(go([c], [MemReader("nodv", caps=caps)], store))
    status, message = st[("fake/dv", "nodv", 1)]
    assert status == "unsupported"
    assert "deletionVectors: no DVs here" in message and "time-travel: latest only" in message


@pytest.fixture
def fake_format():
    """Format ``fake`` registered for one test: its ``configuration`` fact is compared as a subset."""
    from conformance import formats

    plugin = formats.FormatPlugin(name="fake", title="Fake", cases="builtins:list",
                                  facts={"version": "exact", "configuration": "subset"})
    formats.register(plugin)
    yield plugin
    formats.unregister(plugin)


def test_versions_and_metadata(store, fake_format):
    c = case("md", expected=[
        Expected(version=0, rows=ROWS.schema.empty_table(), metadata={"version": 0}),
        Expected(rows=ROWS, metadata={"version": 1, "configuration": {"a": "1"}}),
        Expected(rows=ROWS, metadata={"version": 7}),
        Expected(rows=ROWS, metadata={"configuration": {"a": "2"}}),
    ])
    out = go([c], [MemReader("good")], store)
    got = [(r.version, r.status, r.message) for r in out.results]
    assert got[0][:2] == (0, "pass") and got[1][:2] == (None, "pass")
    assert got[2][1] == "fail" and "version: 1, expected 7" in got[2][2]
    assert got[3][1] == "fail" and "configuration" in got[3][2]


def test_build_failure_and_unsupported_steps(store):
    bad = case("raw", steps=[Create(schema=ROWS.schema), Raw(fn=lambda s: None, description="x")])
    out = go([bad], [MemReader("good")], store)
    (r,) = out.results
    assert r.status == "unsupported" and "cannot run step(s) Raw" in r.message


def test_no_writer_is_a_visible_skip(store):
    c = case("only-other", writers=("spark",))
    (r,) = go([c], [MemReader("good")], store).results
    assert r.status == "skip" and r.writer == "none" and "spark" in r.message


def test_unavailable_reader_is_skip(store):
    class Gone(MemReader):
        def available(self):
            return "not installed here"

    (r,) = go([case()], [Gone("gone")], store).results
    assert r.status == "skip" and "not installed here" in r.message


def test_results_document_matches_schema(store):
    out = go([case(), case("neg", expected=[Expected(error="invalid_table")])], [MemReader("good")], store)
    doc = json.loads(json.dumps(out.document))
    assert problems(doc) == []
    assert {e["name"] for e in doc["engines"]} == {"mem-writer", "good"}
    assert doc["engines"][0]["roles"] == ["writer"]
    assert doc["results"][1]["expected_error"] == "invalid_table"
    assert doc["cases"]["fake/c"]["rules"] == ["DELTA-LOG-001"]
    assert all(isinstance(r["seconds"], float) for r in doc["results"])


def test_progress_goes_to_the_stream(store):
    stream = io.StringIO()
    run([case()], [MemWriter(), MemReader("good")], store=store, progress=True, progress_stream=stream)
    text = stream.getvalue()
    assert "[1/1 " in text and "s] fake/c" in text and "done: 1 cells" in text


def test_table_locations_come_from_the_store(tmp_path, monkeypatch):
    local = open_store("local", str(tmp_path))
    ref = table_location(local, "w", case())
    assert ref.uri == str(tmp_path / "tables" / "w" / "fake" / "c") and ref.storage_options == {}
    (tmp_path / "tables" / "w" / "fake" / "c").mkdir()
    (tmp_path / "tables" / "w" / "fake" / "c" / "old").write_text("x")
    table_location(local, "w", case())
    assert not (tmp_path / "tables" / "w" / "fake" / "c").exists()  # a leftover of an earlier run is removed
    assert (tmp_path / "tables" / "w" / "fake").is_dir()

    monkeypatch.setenv("LAKECONF_S3_BUCKET", "bkt")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "user1234")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-value-1")
    s3 = open_store("s3", str(tmp_path))
    ref = table_location(s3, "w", case())
    assert ref.uri.startswith("s3://bkt/") and ref.uri.endswith("/w/fake/c")
    assert ref.storage_options["AWS_ENDPOINT_URL"] == "http://127.0.0.1:9000"
    assert "secret-value-1" not in repr(ref) and "secret-value-1" not in repr(s3)


def test_results_name_the_store_without_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKECONF_S3_BUCKET", "bkt")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "user1234")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-value-1")
    s3 = open_store("s3", str(tmp_path))
    out = go([case()], [MemReader("good")], s3)  # the in-memory engines never touch the endpoint
    doc = json.dumps(out.document)
    assert out.document["store"] == "s3" and out.document["store_root"].startswith("s3://bkt/")
    assert "secret-value-1" not in doc and "user1234" not in doc


def test_engine_startup_is_timed_and_a_failed_start_skips_with_the_reason(store):
    class Slow(MemReader):
        def start(self):
            import time

            time.sleep(0.05)

    class Broken(MemReader):
        def start(self):
            raise RuntimeError("no JVM today")

    out = go([case()], [Slow("slow"), Broken("broken")], store)
    startup = out.document["engine_startup_seconds"]
    assert startup["slow"] >= 0.05 and "broken" in startup and "mem-writer" in startup
    st = statuses(out)
    assert st[("fake/c", "slow", None)][0] == "pass"
    assert st[("fake/c", "broken", None)] == ("skip", "engine unavailable: start-up failed: RuntimeError: no JVM today")
    assert out.document["timing"]["run_seconds"] > 0 and "mem-writer" in out.document["timing"]["build_seconds"]


def test_verdict_counts_unexplained_and_reference_failures():
    def cell(reader, status, finding=None):
        return {"reader": reader, "status": status, **({"finding": finding} if finding else {})}

    explained = {"source": "registry", "cause": "c", "spec": "s", "side": "reader"}
    v = verdict([cell("reference", "pass"), cell("x", "fail", explained), cell("x", "unsupported", explained),
                 cell("y", "skip")])
    assert v.ok and v.unexplained == 0 and v.counts["fail"] == 1 and v.counts["skip"] == 1
    assert "4 cells: 1 pass, 0 partial, 1 fail, 0 error, 1 unsupported, 1 skip; unexplained 0" in v.line()
    assert not verdict([cell("x", "error")]).ok  # a new finding
    ref = verdict([cell("reference", "fail", explained)])
    assert ref.reference_failures == 1 and not ref.ok  # the reference is never explained away
    writer_side = verdict([cell("reference", "error", explained | {"side": "writer"})])
    assert writer_side.ok  # a table the writer could not build is the writer's finding

def test_check_cell_uses_timestamp_capability(store):
    caps = Capabilities(read=frozenset({"fake"}), read_features={"fake": None}, unsupported={"fake": {"timestamp-travel": "no"}})
    status, message, _ = check_cell(case(), Expected(timestamp="2024-01-01T00:00:00Z", rows=ROWS), MemReader("r", caps=caps),
                                    TableRef(format="fake", uri="nowhere"))
    assert status == "unsupported" and "timestamp-travel" in message


def test_an_engine_log_is_kept_only_with_a_failed_cell(store):
    class Logging(MemReader):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.log = ["boot noise"]  # one log per engine: readers run side by side

        def log_mark(self):
            return len(self.log)

        def log_since(self, mark):
            return "\n".join(self.log[mark:])

        def read(self, table, **kw):
            self.log.append(f"{self.name} read, password=hunter2")
            return super().read(table, **kw)

    out = go([case()], [Logging("good-log"), Logging("bad-log", "wrong")], store)
    rows = {r["reader"]: r for r in out.document["results"]}
    assert "engine_log" not in rows["good-log"]
    assert rows["bad-log"]["engine_log"] == "bad-log read, password=***"  # only this cell's lines, redacted
    md = render_markdown(out.document)
    assert "Engine log" in md and "bad-log read" in md


def test_spark_without_java_is_skip_with_the_reason_in_every_cell(store, monkeypatch):
    pytest.importorskip("pyspark")
    from conformance.cases.registry import all_cases
    from conformance.engines.registry import load_engines
    from conformance.engines.spark import lines

    # The engine's worker inherits this environment: no JAVA_HOME, and a PATH without java.
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    basic = [c for c in all_cases(format="delta") if c.id == "delta/basic-append"]
    here = lines.line_for_pyspark(lines.installed_pyspark()).engine  # the line whose pyspark is installed
    out = run(basic, load_engines(["reference", here]), store=store, progress=False)
    spark_cells = [r for r in out.results if "spark" in (r.writer, r.reader)]
    assert spark_cells and all(r.status == "skip" and "no Java runtime" in r.message for r in spark_cells)
    assert all(r.status == "pass" for r in out.results if r.writer == r.reader == "reference")
    assert "spark" not in out.document["engine_startup_seconds"]  # never started
    assert verdict(out.document["results"]).ok


def test_lanes_give_the_serial_order_and_verdicts(store):
    """Engines work side by side, yet results come out in plan order, the same as a serial run."""
    cs = [case(f"c{i}", expected=[Expected(version=0, rows=ROWS.schema.empty_table()), Expected(rows=ROWS)]) for i in range(6)]
    readers = [MemReader("good"), MemReader("wrong", "wrong"), MemReader("raise", "raise")]
    serial = go(cs, readers, store, serial=True)
    side_by_side = go(cs, readers, store)
    key = lambda out: [(r.case, r.writer, r.reader, r.version, r.status) for r in out.results]  # noqa: E731
    assert key(serial) == key(side_by_side) and len(key(serial)) == 6 * 3 * 2
    assert side_by_side.document["timing"]["parallel"] and not serial.document["timing"]["parallel"]


def test_a_case_whose_cells_name_writers_but_no_reader_is_built_only(store):
    """``lakeconf findings verify`` builds a violation entry's tables for the validator alone, in the same run."""
    TABLES.clear()
    out = run([case("built"), case("read")], [MemWriter(), MemReader("good")], store=store, progress=False,
              cells_of=lambda c: ({"mem-writer"}, set() if c.id == "fake/built" else {"good"}))
    assert [(r.case, r.reader, r.status) for r in out.results] == [("fake/read", "good", "pass")]
    assert len(TABLES) == 2  # both tables were written


class CountingReader(MemReader):
    """Counts its reads; the first one interrupts the run (from its lane's thread, or in the main thread)."""

    def __init__(self, name, how):
        super().__init__(name)
        self.how, self.reads = how, 0

    def read(self, table, **kw):
        import _thread
        import time

        self.reads += 1
        if self.reads == 1:
            if self.how == "raise":
                raise KeyboardInterrupt  # as a child process's Ctrl-C comes back to a lane's thread
            _thread.interrupt_main()  # a Ctrl-C in the main thread (it looks up at least once a second)
        time.sleep(0.1)  # a read takes time: 40 of them, 4 s
        return super().read(table, **kw)


@pytest.mark.parametrize("how", ["raise", "main"])
def test_an_interrupt_stops_the_run_after_the_jobs_in_hand(store, how):
    """Ctrl-C (or SIGTERM, which cli.main turns into one) ends a run without running the queued jobs,
    whichever thread it reaches first; before, a lane's thread died and the run waited for ever."""
    import signal

    reader = CountingReader("counting", how)
    cs = [case(f"c{i}") for i in range(40)]
    # Python's own Ctrl-C handler, which interrupt_main() needs (pytest-xdist's workers ignore SIGINT)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            go(cs, [reader], store)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert 1 <= reader.reads <= 15  # the jobs of the second it took to notice, not the 40 queued
