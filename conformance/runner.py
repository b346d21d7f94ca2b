"""The run: every case built by every writer that can, read by every reader, at every expected version.

For each case (from the registry, filtered by format and an id pattern) and each writer engine
allowed and able to build it, the runner builds the table once in a work directory (or an S3
prefix), then asks each reader for the rows at each ``Expected`` version and compares them with
the expected result. Each (case, writer, reader, version) cell gets one status:

* ``pass``        the rows (and checked metadata) match, or the engine refused the table with the
                  expected kind (invalid table / unsupported, as its adapter translated it);
* ``fail``        a wrong answer (minimal diff), or an expected error not raised (rows returned
                  silently), or a refusal of the wrong kind;
* ``error``       the engine raised where the spec expects rows, or failed in a way that is no
                  verdict on the table (an import error, a storage failure, a crash, its own bug,
                  anything its adapter could not name) where a refusal was expected; or the
                  build failed;
* ``partial``     the rows match, but the metadata the case expects could not be checked (the
                  engine gives no metadata for it): counted apart from passes;
* ``unsupported`` the case needs a capability the engine does not declare, or the engine itself
                  raised ``Unsupported``;
* ``skip``        the engine is not usable here (not installed), or no selected writer builds it.

Each non-pass cell carries its explanation when one is known (results.json key ``finding``): a
registered engine finding (``conformance.findings``), a capability the engine declares it
lacks, or a table the writer cannot build. A fail, error or undeclared unsupported cell without
one is *unexplained*: the report flags it as new.

Nothing here is format-specific: formats live in the cases and the engines. An engine raising
anything (Rust panics surface as ``BaseException``) costs one cell, never the run.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import os
import queue
import shutil
import sys
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterable, Mapping, Sequence, TextIO

from conformance.compare import compare
from conformance.engines.base import REF_TRAVEL, TIME_TRAVEL, TIMESTAMP_TRAVEL, Engine
from conformance.findings import FINDING_STATUSES, capability_explanation, explain, not_built_explanation
from conformance.writer_checks import check as check_writer
from conformance.model import Case, Expected, Result, TableRef
from conformance.redact import redact, register_secret
from conformance.storage import Store

SCHEMA_VERSION = 1
REFUSALS = ("invalid_table", "unsupported")  # the kinds that are a verdict on the table
_MESSAGE_MAX = 500  # one cell's message stays readable in a report cell


# ----------------------------------------------------------------------------------------------
# Where built tables live: a ``conformance.storage.Store`` (local directory, MinIO, S3)
# ----------------------------------------------------------------------------------------------


def table_location(store: Store, writer: str, case: Case) -> TableRef:
    """Where ``writer`` builds ``case`` in ``store`` (fresh: a local leftover is removed first)."""
    table = store.table_ref(case.format, writer, case.format, *case.slug.split("/"))
    if not store.is_s3:
        if os.path.exists(table.uri):
            shutil.rmtree(table.uri)
        os.makedirs(os.path.dirname(table.uri), exist_ok=True)
    return table


# ----------------------------------------------------------------------------------------------
# Case selection
# ----------------------------------------------------------------------------------------------


def load_cases(fmt: str | None = None, pattern: str | None = None) -> list[Case]:
    """Cases from the registry for ``fmt`` (all formats if None) whose id matches ``pattern``."""
    from conformance.cases.registry import all_cases

    cases = list(all_cases(format=fmt))
    if pattern:
        pats = [p.strip() for p in pattern.split(",") if p.strip()]
        cases = [c for c in cases if any(fnmatch.fnmatchcase(c.id, p) or fnmatch.fnmatchcase(c.slug, p) for p in pats)]
    return cases


# ----------------------------------------------------------------------------------------------
# Progress
# ----------------------------------------------------------------------------------------------


class Progress:
    """A one-line progress bar on a terminal; a line per case otherwise (CI logs)."""

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.started = time.monotonic()
        self._last_line = self.started
        self.counts: dict[str, int] = {}

    HEARTBEAT_S = 30.0  # off a terminal, a line at least this often even while no case completes

    def cell(self, result: Result) -> None:
        """Count one finished cell and redraw."""
        self.done += 1
        self.counts[result.status] = self.counts.get(result.status, 0) + 1
        if self.enabled and not self.tty and time.monotonic() - self._last_line > self.HEARTBEAT_S:
            self._line(f"{result.case} [{result.reader}]")
        if self.enabled and self.tty:
            width = 30
            filled = int(width * self.done / self.total)
            label = f"{result.case} [{result.reader}]"
            self.stream.write(
                f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {self._counts()} {label[:50]:<50}"
            )
            self.stream.flush()

    def case_done(self, case: Case) -> None:
        """Log one finished case when not on a terminal."""
        if self.enabled and not self.tty:
            self._line(case.id)

    def _line(self, what: str) -> None:
        self._last_line = time.monotonic()
        elapsed = self._last_line - self.started
        self.stream.write(f"[{self.done}/{self.total} {elapsed:.0f}s] {what} ({self._counts()})\n")
        self.stream.flush()

    def finish(self) -> None:
        """End the bar with the totals and the elapsed time."""
        if self.enabled:
            prefix = "\n" if self.tty else ""
            self.stream.write(f"{prefix}done: {self.done} cells in {time.monotonic() - self.started:.1f}s ({self._counts()})\n")
            self.stream.flush()

    def _counts(self) -> str:
        return " ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))


# ----------------------------------------------------------------------------------------------
# One cell
# ----------------------------------------------------------------------------------------------


def _short(text: str) -> str:
    text = redact(" ".join(str(text).split()))
    return text if len(text) <= _MESSAGE_MAX else text[: _MESSAGE_MAX - 3] + "..."


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` on one line (the engine's words, shortened)."""
    kind = getattr(exc, "kind", None)
    label = type(exc).__name__ + (f"[{kind}]" if kind and kind != "error" else "")
    return _short(f"{label}: {exc}")


def _is_unsupported(exc: BaseException) -> bool:
    return getattr(exc, "kind", None) == "unsupported"


def _comparison(fmt: str, key: str) -> str:
    """How the format compares fact ``key`` (``exact`` for a format the registry does not know)."""
    from conformance import formats

    try:
        return formats.get(fmt).comparison(key)
    except KeyError:
        return "exact"


def _metadata_mismatches(expected: Mapping[str, Any], actual: Mapping[str, Any], fmt: str = "") -> list[str]:
    """Keys of ``expected`` whose values ``actual`` contradicts (keys ``actual`` lacks are not checked).

    Each key is compared as the format declares (``FormatPlugin.facts``): ``subset`` (the
    expectation lists what must be present: a map's entries, a list's items), ``unordered``
    (equal in any order) or ``exact``.
    """
    out = []
    for key, want in expected.items():
        if key not in actual:
            continue
        got = actual[key]
        how = _comparison(fmt, key)
        if how == "subset" and isinstance(want, Mapping) and isinstance(got, Mapping):
            wrong = {k: got.get(k) for k, v in want.items() if k not in got or str(got[k]) != str(v)}
            if wrong:
                out.append(f"{key}: {wrong!r}, expected {dict(want)!r}")
        elif how == "subset" and isinstance(want, (list, tuple, set, frozenset)) and isinstance(got, (list, tuple, set, frozenset)):
            absent = sorted(set(want) - set(got))
            if absent:
                out.append(f"{key}: lacks {absent} (has {sorted(got)})")
        elif how == "unordered" and isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
            if sorted(map(_canonical_text, want)) != sorted(map(_canonical_text, got)):
                out.append(f"{key}: {got!r}, expected (in any order) {want!r}")
        elif _norm_meta(want) != _norm_meta(got):
            out.append(f"{key}: {got!r}, expected {want!r}")
    return out


def _canonical_text(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, default=str)


def _norm_meta(value: Any) -> Any:
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_norm_meta(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, Mapping):
        return {k: _norm_meta(v) for k, v in value.items()}
    return value


def capability_gap(case: Case, expected: Expected, reader: Engine) -> str | None:
    """Why ``reader`` declares it cannot read this cell (``needs X (X: reason)``), or None."""
    caps = reader.capabilities()
    needed = list(case.features)
    if expected.timestamp is not None:
        needed.append(TIMESTAMP_TRAVEL)
    elif expected.ref is not None:
        needed.append(REF_TRAVEL)
    elif expected.version is not None:
        needed.append(TIME_TRAVEL)
    missing = list(dict.fromkeys(caps.missing_read_features(case.format, needed)))
    if not missing:
        return None
    reasons = "; ".join(f"{f}: {caps.reason(case.format, f)}" for f in missing)
    return _short(f"needs {', '.join(missing)} ({reasons})")


_VERSIONS: "weakref.WeakKeyDictionary[Engine, str]" = weakref.WeakKeyDictionary()


def _version_of(engine: Engine) -> str:
    """``engine.version()``, asked once per engine object (a command engine runs a process for it)."""
    try:
        return _VERSIONS[engine]
    except (KeyError, TypeError):
        pass
    try:
        version = engine.version()
    except Exception as exc:  # noqa: BLE001 - an unknown version matches no finding
        version = f"unknown ({type(exc).__name__})"
    try:
        _VERSIONS[engine] = version
    except TypeError:  # an engine that cannot be weakly referenced is asked every time
        pass
    return version


def explain_cell(
    case: Case, expected: Expected, reader: Engine, status: str, writer: str = "reference", store: str = "local",
    text: str = "",
) -> dict[str, Any] | None:
    """The explanation attached to a non-pass cell: a registered finding whose pattern matches the
    cell's ``text`` (message and diff) and that was seen with this version of the reader, else a
    declared capability gap."""
    if status not in FINDING_STATUSES:
        return None
    finding = explain(case.id, reader.name, status, writer=writer, store=store, text=text,
                      engine_version=_version_of(reader))
    if finding is not None:
        return finding.to_dict()
    if status == "unsupported":
        try:
            gap = capability_gap(case, expected, reader)
        except Exception:  # noqa: BLE001 - an explanation never costs the cell
            gap = None
        if gap:
            return capability_explanation(gap)
    return None


def check_cell(case: Case, expected: Expected, reader: Engine, table: TableRef) -> tuple[str, str, str]:
    """Read one cell and judge it: ``(status, message, diff)``. Never raises (except Ctrl-C)."""
    gap = capability_gap(case, expected, reader)
    if gap:
        return "unsupported", gap, ""

    at = None if expected.timestamp is not None else expected.version
    if expected.timestamp is not None:
        where = f"as of {expected.timestamp}"
    elif expected.ref is not None:
        where = f"at ref {expected.ref!r}"
    else:
        where = f"at version {at}" if at is not None else "at the latest version"
    # ``ref`` is passed only when the case reads one, so adapters written before refs existed
    # (a vendor's, say) keep working for every other cell.
    ref_kw = {"ref": expected.ref} if expected.ref is not None else {}
    try:
        actual = reader.read(table, at=at, timestamp=expected.timestamp, **ref_kw)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - Rust panics are BaseExceptions; one cell, not the run
        kind = getattr(exc, "kind", None)
        if kind not in REFUSALS and kind != "internal":
            kind = None  # not translated into the kit's kinds, or plain "error": no verdict on the table
        if kind is not None and kind in (expected.error, expected.error_allowed):
            said = REFUSED_AS_EXPECTED[0] if kind == expected.error else REFUSED_AS_EXPECTED[1]
            return "pass", _short(f"{said}: {describe_exception(exc)}"), ""
        if expected.error is not None:
            if kind in REFUSALS:
                return "fail", _short(f"raised {kind}, expected {expected.error}: {describe_exception(exc)}"), ""
            what = "an internal error" if kind == "internal" else "a failure that is no refusal of the table"
            return "error", _short(f"{what} instead of {expected.error}: {describe_exception(exc)}"), ""
        if _is_unsupported(exc):
            return "unsupported", describe_exception(exc), ""
        return "error", describe_exception(exc), ""

    if expected.error is not None:
        return (
            "fail",
            _short(f"returned {actual.num_rows} row(s) silently {where}; a correct reader raises {expected.error}"),
            "",
        )
    if expected.rows is not None:
        result = compare(actual, expected.rows)
        if not result.equal:
            return "fail", _short(result.summary), redact(result.diff)
    if expected.metadata:
        try:
            facts = reader.describe(table, at=at, timestamp=expected.timestamp, **ref_kw)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001
            return "error", _short(f"rows match, but describing the table failed: {describe_exception(exc)}"), ""
        if facts is None:
            return "partial", "rows match; metadata not checked: the engine gave no metadata for this table", ""
        wrong = _metadata_mismatches(expected.metadata, facts, case.format)
        if wrong:
            return "fail", _short("metadata: " + "; ".join(wrong)), "\n".join(wrong)
    return "pass", "", ""


# ----------------------------------------------------------------------------------------------
# The run
# ----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class RunOutcome:
    """What a run produced: the results.json document and the cell results."""

    document: dict[str, Any]
    results: list[Result]


def _engine_entry(engine: Engine, reason: str | None) -> dict[str, Any]:
    try:
        version = engine.version()
    except Exception as exc:  # noqa: BLE001
        version = f"unknown ({type(exc).__name__})"
    try:
        roles = engine.roles()
        caps = engine.capabilities()
        unsupported = {f: dict(g) for f, g in caps.unsupported.items() if g}
        formats = sorted(caps.read | caps.write)
    except Exception as exc:  # noqa: BLE001
        roles, unsupported, formats = [], {}, []
        reason = reason or f"capabilities failed: {exc}"
    entry: dict[str, Any] = {"name": engine.name, "version": version, "roles": roles, "formats": formats}
    if unsupported:
        entry["unsupported"] = unsupported
    if reason:
        entry["unavailable"] = reason
    return entry


def _case_entry(case: Case) -> dict[str, Any]:
    return {
        "description": case.description,
        "rules": list(case.rules),
        "features": list(case.features),
        "notes": case.notes,
        "violates": list(case.violates),
        "expected": [
            {
                "version": e.version,
                "timestamp": e.timestamp,
                "ref": e.ref,
                "error": e.error,
                "rows": None if e.rows is None else e.rows.num_rows,
                "metadata": sorted(e.metadata),
            }
            for e in case.expected
        ],
    }


class Pending:
    """Jobs submitted to any lane and not finished. A job's own submissions are counted before it
    is, so the count reaches zero only when the whole run is done."""

    def __init__(self) -> None:
        self._count = 0
        self._cond = threading.Condition()

    def add(self) -> None:
        with self._cond:
            self._count += 1

    def done(self) -> None:
        with self._cond:
            self._count -= 1
            if self._count == 0:
                self._cond.notify_all()

    def wait(self) -> None:
        """Until no job is left (a Ctrl-C still gets through: the wait wakes every second)."""
        with self._cond:
            while self._count:
                self._cond.wait(1.0)


class Lane:
    """One engine's work, in order: its start, the tables it builds, the cells it reads.

    Every engine has a lane, so an engine does no more at once than it says it can
    (``Engine.concurrency``: one thread per job it takes at a time, all taking from one queue in
    submission order), while different engines work side by side (a JVM reading while the Python
    readers read in their worker processes). The first job (the engine's start) runs alone; after
    it, a job that needs another done first is submitted by it (a table's reads by its build), so
    several threads never reorder what depends on what.
    ``serial`` lanes run each job as it is submitted, in the caller's thread: the plan's order,
    one thing at a time. Once ``cancelled`` is set (a Ctrl-C or SIGTERM), the lanes skip the jobs
    they have not started, so the run ends after the jobs in hand instead of after all of them.
    """

    def __init__(self, engine: Engine | None, *, serial: bool, errors: list[BaseException], pending: "Pending",
                 name: str | None = None, cancelled: threading.Event | None = None) -> None:
        self.engine = engine
        self.serial = serial
        self.unavailable: str | None = None
        self.startup: float | None = None
        self._errors = errors
        self._pending = pending
        self._cancelled = cancelled or threading.Event()
        self._jobs: "queue.Queue[Callable[[], None] | None]" = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._first_done = threading.Event()
        if not serial:
            label = name or engine.name
            for i in range(max(1, int(getattr(engine, "concurrency", 1) or 1))):
                thread = threading.Thread(target=self._loop, args=(i == 0,), name=f"lakeconf-{label}-{i}", daemon=True)
                thread.start()
                self._threads.append(thread)

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` after the jobs submitted before it."""
        if self.serial:
            self._guarded(job)
        else:
            self._pending.add()
            self._jobs.put(job)

    def _guarded(self, job: Callable[[], None]) -> None:
        try:
            job()
        except KeyboardInterrupt as exc:
            if self.serial:
                raise
            # In a lane's thread it comes from a child process the Ctrl-C reached first (the
            # validator's): the whole run stops, as when the main thread gets it.
            self._errors.append(exc)
            self._cancelled.set()
        except BaseException as exc:  # noqa: BLE001 - a harness bug ends the run with its message, not a hang
            self._errors.append(exc)

    def _loop(self, first: bool) -> None:
        if not first:
            self._first_done.wait()
        while True:
            job = self._jobs.get()
            if job is None:
                self._first_done.set()
                return
            try:
                if not self._cancelled.is_set():
                    self._guarded(job)
            finally:
                self._pending.done()
                self._first_done.set()

    def stop(self) -> None:
        """End the lane's threads (after the jobs already submitted)."""
        for _ in self._threads:
            self._jobs.put(None)
        for thread in self._threads:
            thread.join()


class ValidatorProcess:
    """``writer_checks.validate`` in one spawned process (started on first use).

    The validator is pure Python, and so are most builders, which run in this process: apart, the two
    do not take turns on one interpreter lock. If the process dies, the table in hand and every later
    one are validated here instead (slower, never lost).
    """

    def __init__(self) -> None:
        self._pool: Any = None
        self._broken = False

    def validate(self, table: TableRef) -> list[dict[str, str]]:
        from conformance.writer_checks import validate

        if self._broken:
            return validate(table)
        from concurrent.futures.process import BrokenProcessPool

        try:
            if self._pool is None:
                import multiprocessing
                from concurrent.futures import ProcessPoolExecutor

                # spawn, not fork: this process holds JVM and engine threads that a fork would copy mid-flight
                self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            return self._pool.submit(validate, table).result()
        except BrokenProcessPool:
            self._broken = True
            return validate(table)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def run(
    cases: Sequence[Case],
    engines: Sequence[Engine],
    *,
    store: Store,
    progress: bool = True,
    progress_stream: TextIO | None = None,
    on_result: Callable[[Result], None] | None = None,
    isolate: bool = False,
    commands: Sequence[str] = (),
    timeout: float | None = None,
    builders: Sequence[Engine] = (),
    serial: bool = False,
    cells_of: Callable[[Case], tuple[Collection[str], Collection[str]]] | None = None,
    validate_apart: bool = False,
) -> RunOutcome:
    """Build and read every case with every engine; return the results document.

    ``isolate``: read in one worker process per engine (see ``conformance.isolation``), so a
    crash or a hang (``timeout`` seconds per cell) costs one cell; engines a worker cannot
    rebuild run in-process. ``builders``: engines used only to write (not read), e.g. the
    reference writer when the selected engines are all readers. Each engine works in its own
    lane (``Lane``), engines side by side; ``serial`` runs everything in this thread instead, in
    plan order. The results come out in plan order either way. ``cells_of``: a case's (writer names,
    reader names) when only those cells are wanted (``lakeconf findings verify`` replays the cells its
    entries name, not every engine pair of their cases); writers without readers build the case's
    tables for the validator alone. ``validate_apart``: the reference validator runs
    in a process of its own (``ValidatorProcess``), so its pure-Python work does not hold this
    interpreter's lock while the builders (also Python, in this process) work.
    """
    run_started = time.perf_counter()
    if store.s3_config is not None:
        # Whatever an engine echoes back (an error naming its options) is masked in every message.
        register_secret(store.s3_config.access_key_id)
        register_secret(store.s3_config.secret_access_key)
    everyone: list[Engine] = list({e.name: e for e in [*engines, *builders]}.values())

    def caps(engine: Engine):
        try:
            return engine.capabilities()
        except Exception:  # noqa: BLE001
            return None

    errors: list[BaseException] = []
    pending = Pending()
    cancelled = threading.Event()
    lanes = {e.name: Lane(e, serial=serial, errors=errors, pending=pending, cancelled=cancelled) for e in everyone}
    # The reference validator judges each built table in a lane of its own, beside the reads.
    validator = Lane(None, serial=serial, errors=errors, pending=pending, name="validator", cancelled=cancelled)
    apart = ValidatorProcess() if validate_apart and not serial else None
    writer_checks: list[tuple[tuple[int, int], dict[str, Any]]] = []
    for lane in lanes.values():
        try:
            lane.unavailable = lane.engine.available()
        except Exception as exc:  # noqa: BLE001
            lane.unavailable = f"availability check failed: {exc}"

    def start(lane: Lane) -> None:
        if lane.unavailable:
            return
        began = time.perf_counter()
        try:
            lane.engine.start()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - an engine that cannot start skips its cells, with the reason
            lane.unavailable = f"start-up failed: {describe_exception(exc)}"
        lane.startup = round(time.perf_counter() - began, 3)

    for lane in lanes.values():  # engines start side by side (two JVMs start in the time of one)
        lane.submit(lambda lane=lane: start(lane))

    readers = [e for e in engines if caps(e) is not None and caps(e).read]
    writers = [e for e in everyone if caps(e) is not None and caps(e).write]
    plan = []
    for case in cases:
        case_writers = [w for w in writers if case.format in caps(w).write and (case.writers is None or w.name in case.writers)]
        case_readers = [r for r in readers if case.format in caps(r).read]
        if cells_of is not None:
            want_writers, want_readers = cells_of(case)
            case_writers = [w for w in case_writers if w.name in want_writers]
            case_readers = [r for r in case_readers if r.name in want_readers]
            if not case_writers:
                continue  # (writers but no reader: the case is built only, for the validator to judge)
        plan.append((case, case_writers, case_readers))
    total = sum(max(len(ws), 1) * len(rs) * len(c.expected) for c, ws, rs in plan)
    bar = Progress(total, stream=progress_stream, enabled=progress)

    workers: dict[str, Any] = {}
    if isolate:
        from conformance.isolation import DEFAULT_TIMEOUT_S, EngineWorker, engine_spec

        for reader in readers:
            if getattr(reader, "in_process", False) or lanes[reader.name].unavailable:
                continue  # e.g. Spark: one JVM per run, in this process (or a worker of its own)
            spec = engine_spec(reader, commands)
            if spec is not None:
                workers[reader.name] = EngineWorker(reader.name, spec, commands, timeout or DEFAULT_TIMEOUT_S)

    cells: list[tuple[tuple[int, ...], Result, dict[str, Any]]] = []
    built_seconds: dict[tuple[str, str], float] = {}
    lock = threading.Lock()
    remaining = {c.id: max(len(ws), 1) * len(rs) * len(c.expected) for c, ws, rs in plan}

    def emit(order: tuple[int, ...], case: Case, cell: tuple[Result, dict[str, Any]]) -> None:
        result, extras = cell
        with lock:
            cells.append((order, result, result.to_dict() | extras))
            bar.cell(result)
            if on_result:
                on_result(result)
            remaining[case.id] -= 1
            if remaining[case.id] == 0:
                bar.case_done(case)

    def judge(case: Case, exp: Expected, reader: Engine, table: TableRef) -> tuple[str, str, str]:
        worker = workers.get(reader.name)
        if worker is not None:
            return worker.check(case, exp, table)
        return check_cell(case, exp, reader, table)

    def read_job(order, case: Case, writer: Engine, reader: Engine, exp: Expected, table: TableRef,
                 build_seconds: float) -> Callable[[], None]:
        def job() -> None:
            reason = lanes[reader.name].unavailable
            if reason:
                emit(order, case, _result(case, writer.name, reader.name, exp, "skip", f"engine unavailable: {reason}"))
                return
            mark = _log_mark(reader)
            started = time.perf_counter()
            try:
                status, message, diff = judge(case, exp, reader, table)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - a harness bug must not end the run either
                status, message, diff = "error", f"harness error: {describe_exception(exc)}", ""
            seconds = time.perf_counter() - started
            emit(order, case, _result(
                case, writer.name, reader.name, exp, status, message, diff=diff, seconds=seconds,
                build_seconds=build_seconds,
                finding=explain_cell(case, exp, reader, status, writer=writer.name, store=store.name,
                                     text=f"{message}\n{diff}"),
                engine_log=_log_since(reader, mark) if status in ("fail", "error") else None,
            ))

        return job

    def check_job(order: tuple[int, int], case: Case, writer: Engine, table: TableRef) -> Callable[[], None]:
        def job() -> None:
            entry = check_writer(case, writer.name, table, store=store.name, writer_version=_version_of(writer),
                                 validate_fn=apart.validate if apart is not None else None)
            if entry is not None:
                with lock:
                    writer_checks.append((order, entry))

        return job

    def build_job(ci: int, wi: int, case: Case, writer: Engine, case_readers: list[Engine]) -> Callable[[], None]:
        def job() -> None:
            mark = _log_mark(writer)
            status, message, table, seconds = _build(case, writer, store, lanes[writer.name].unavailable)
            build_log = _log_since(writer, mark) if status == "error" else None
            with lock:
                built_seconds[(writer.name, case.id)] = seconds
            if status is None:
                validator.submit(check_job((ci, wi), case, writer, table))
            for ri, reader in enumerate(case_readers):
                for ei, exp in enumerate(case.expected):
                    order = (ci, wi, ri, ei)
                    if status is None:
                        lanes[reader.name].submit(read_job(order, case, writer, reader, exp, table, seconds))
                        continue
                    if status == "unsupported":
                        why = not_built_explanation(message)
                    else:  # a writer-side finding may explain a build error (every reader's cell)
                        why = explain_cell(case, exp, reader, status, writer=writer.name, store=store.name,
                                           text=message)
                    emit(order, case, _result(case, writer.name, reader.name, exp, status, message, seconds=0.0,
                                              finding=why, engine_log=build_log))

        return job

    try:
        for ci, (case, case_writers, case_readers) in enumerate(plan):
            if not case_writers:
                why = (
                    f"no selected engine writes {case.format}"
                    if case.writers is None
                    else f"case is built only by {', '.join(case.writers)}, none selected"
                )
                for ri, reader in enumerate(case_readers):
                    for ei, exp in enumerate(case.expected):
                        emit((ci, 0, ri, ei), case, _result(case, "none", reader.name, exp, "skip", why))
                continue
            for wi, writer in enumerate(case_writers):
                lanes[writer.name].submit(build_job(ci, wi, case, writer, case_readers))
        pending.wait()
    except BaseException:
        cancelled.set()  # a Ctrl-C (or SIGTERM, see cli.main): stop after the jobs in hand
        raise
    finally:
        for lane in lanes.values():
            lane.stop()
        validator.stop()
        if apart is not None:
            apart.close()
        for worker in workers.values():
            worker.close()
    if errors:
        raise errors[0]
    bar.finish()

    for engine in everyone:
        try:
            engine.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass

    cells.sort(key=lambda c: c[0])
    results = [r for _, r, _ in cells]
    rows = [row for _, _, row in cells]
    build_seconds: dict[str, float] = {}
    read_seconds: dict[str, float] = {}
    for row in rows:
        read_seconds[row["reader"]] = read_seconds.get(row["reader"], 0.0) + row["seconds"]
    for (writer, _case), seconds in built_seconds.items():
        build_seconds[writer] = build_seconds.get(writer, 0.0) + seconds
    names = {e.name for e in engines}
    document = {
        "schema_version": SCHEMA_VERSION,
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        # The store's kind and root only: endpoint credentials never enter results.json.
        "store": store.name,
        "store_root": store.root,
        "engine_startup_seconds": {name: lane.startup for name, lane in lanes.items() if lane.startup is not None},
        "store_startup_seconds": None if store.startup_seconds is None else round(store.startup_seconds, 3),
        "timing": {
            "run_seconds": round(time.perf_counter() - run_started, 3),
            "build_seconds": {k: round(v, 3) for k, v in build_seconds.items()},
            "read_seconds": {k: round(v, 3) for k, v in read_seconds.items()},
            "validate_seconds": round(sum(e.get("seconds", 0.0) for _, e in writer_checks), 3),
            "parallel": not serial,
        },
        "isolated": sorted(workers),
        "engines": [_engine_entry(e, lanes[e.name].unavailable) for e in engines]
        + [_engine_entry(e, lanes[e.name].unavailable) | {"roles": ["writer"]} for e in builders if e.name not in names],
        "results": rows,
        # one entry per built table: the reference validator's verdict on what the writer wrote
        "writer_checks": [entry for _, entry in sorted(writer_checks, key=lambda c: c[0])],
        "cases": {c.id: _case_entry(c) for c in cases},
    }
    return RunOutcome(document=document, results=results)


_LOG_MAX = 4000  # characters of an engine's own log kept with a failed cell


def _log_mark(engine: Engine) -> Any:
    """Where an engine's own log (e.g. Spark's log4j file) ends now, if it keeps one."""
    mark = getattr(engine, "log_mark", None)
    try:
        return mark() if callable(mark) else None
    except Exception:  # noqa: BLE001 - a log is a courtesy, never a cost
        return None


def _log_since(engine: Engine, mark: Any) -> str | None:
    """What the engine logged since ``mark``: kept only with a failed cell, redacted, shortened."""
    since = getattr(engine, "log_since", None)
    if not callable(since) or mark is None:
        return None
    try:
        text = since(mark) or ""
    except Exception:  # noqa: BLE001
        return None
    text = redact(text.strip())
    return (text if len(text) <= _LOG_MAX else "..." + text[-_LOG_MAX:]) or None


REFUSED_AS_EXPECTED = ("raised as expected", "refused, which the spec allows")


def checked(exp: Expected, status: str, message: str = "") -> list[str]:
    """What a passing (or partial) cell verified: the refusal, the rows, the table's metadata."""
    if message.startswith(REFUSED_AS_EXPECTED):
        return ["refusal"]
    out = ["rows"] if exp.rows is not None else []
    if exp.metadata and status == "pass":
        out.append("metadata")
    return out


def _result(
    case: Case,
    writer: str,
    reader: str,
    exp: Expected,
    status: str,
    message: str,
    *,
    diff: str = "",
    seconds: float = 0.0,
    build_seconds: float | None = None,
    finding: Mapping[str, Any] | None = None,
    engine_log: str | None = None,
) -> tuple[Result, dict[str, Any]]:
    """One cell, and the extra keys results.json carries for it."""
    result = Result(
        case=case.id, format=case.format, writer=writer, reader=reader, version=exp.version,
        status=status, message=message, seconds=seconds, rules=tuple(case.rules), diff=diff,  # type: ignore[arg-type]
    )
    extras: dict[str, Any] = {}
    if exp.timestamp is not None:
        extras["timestamp"] = exp.timestamp
    if exp.ref is not None:
        extras["ref"] = exp.ref
    if exp.error is not None:
        extras["expected_error"] = exp.error
    if build_seconds is not None:
        extras["build_seconds"] = round(build_seconds, 4)
    if status in ("pass", "partial"):
        extras["checked"] = checked(exp, status, message)
    if finding is not None:
        # The explanation travels with the cell so `lakeconf report` re-renders without the registry.
        extras["finding"] = dict(finding)
    if engine_log:
        # The engine's own log (Spark's) stays out of results unless its cell failed.
        extras["engine_log"] = engine_log
    return result, extras


def _build(case: Case, writer: Engine, store: Store, unavailable: str | None) -> tuple[str | None, str, TableRef | None, float]:
    """Build ``case`` with ``writer``: (None, "", table, seconds) or (status, message, None, seconds)."""
    if unavailable:
        return "skip", f"writer {writer.name} unavailable: {unavailable}", None, 0.0
    caps = writer.capabilities()
    allowed = caps.write_steps.get(case.format)
    if allowed is not None:
        missing = sorted({type(s).__name__ for s in case.steps} - set(allowed))
        if missing:
            return "unsupported", f"writer {writer.name} cannot run step(s) {', '.join(missing)}", None, 0.0
    started = time.perf_counter()
    try:
        table = table_location(store, writer.name, case)
        writer.write(table, case.steps)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001
        seconds = time.perf_counter() - started
        if _is_unsupported(exc):
            return "unsupported", f"writer {writer.name} cannot build it: {describe_exception(exc)}", None, seconds
        return "error", f"build failed (writer {writer.name}): {describe_exception(exc)}", None, seconds
    return None, "", table, time.perf_counter() - started


def failed(results: Iterable[Result | Mapping[str, Any]]) -> bool:
    """Whether any cell is a finding (fail or error)."""
    for r in results:
        status = r["status"] if isinstance(r, Mapping) else r.status
        if status in ("fail", "error"):
            return True
    return False


REFERENCE = "reference"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a run's cells add up to: counts per status, unexplained cells, reference failures."""

    counts: Mapping[str, int]
    unexplained: int
    reference_failures: int
    tables_checked: int = 0  # tables the reference validator judged (``writer_checks``)
    writer_unexplained: int = 0  # violations (or validator failures) nothing accounts for
    problems: tuple[str, ...] = ()  # one line per unexplained cell, reference failure or violation

    @property
    def ok(self) -> bool:
        """Every non-pass and every violation explained, and the reference read everything right (exit 0)."""
        return self.unexplained == 0 and self.reference_failures == 0 and self.writer_unexplained == 0

    def line(self) -> str:
        """The one-line summary ``lakeconf run`` prints."""
        from conformance.model import STATUSES

        total = sum(self.counts.values())
        parts = ", ".join(f"{self.counts.get(s, 0)} {s}" for s in STATUSES)
        return (
            f"{total} cells: {parts}; unexplained {self.unexplained}; "
            f"reference failures {self.reference_failures}; {self.tables_checked} tables validated, "
            f"unexplained violations {self.writer_unexplained}"
        )


def verdict(rows: Iterable[Mapping[str, Any]], writer_checks: Iterable[Mapping[str, Any]] = ()) -> Verdict:
    """Judge results.json rows: a fail/error/unsupported cell without an explanation is unexplained;
    a fail/error of the reference reader is a reference failure unless a writer-side finding
    explains it (the writer built a table nobody can read). ``writer_checks``: the validator's
    entries, each unexplained violation counted (``conformance.writer_checks.unexplained``)."""
    from conformance.writer_checks import unexplained as unexplained_violations

    from conformance.model import STATUSES

    counts = {s: 0 for s in STATUSES}
    unexplained = reference_failures = 0
    problems: list[str] = []
    for r in rows:
        status = r["status"]
        counts[status] = counts.get(status, 0) + 1
        info = r.get("finding")
        explained = isinstance(info, Mapping)
        cell = f"cell {r.get('case')} ({r.get('writer')} -> {r.get('reader')}): {status}: {r.get('message', '')}"
        if status in FINDING_STATUSES and not explained:
            unexplained += 1
            problems.append(cell)
        if r.get("reader") == REFERENCE and status in ("fail", "error"):
            if not (explained and info.get("side") == "writer"):
                reference_failures += 1
                if explained:
                    problems.append(f"reference failure, {cell}")
    checks = list(writer_checks)
    violations = [f"table {e.get('case')} by {e.get('writer')}: {u}" for e in checks for u in unexplained_violations(e)]
    return Verdict(counts=counts, unexplained=unexplained, reference_failures=reference_failures,
                   tables_checked=len(checks), writer_unexplained=len(violations), problems=(*problems, *violations))
