"""Engine isolation: an engine runs in a worker process, so a crash or a hang costs one cell.

Native engines (Rust, C++) can abort the process on a malformed table, and an exception handler
cannot catch a segfault. With isolation on, the runner sends each cell to a long-lived worker
per engine (started once, so imports are paid once); if the worker dies, the cell is an *error*
naming the exit signal and the worker is restarted for the next cell; if it does not answer
within the time limit, it is killed and the cell is an *error* saying so.

The same worker also hosts an engine that cannot live in this interpreter at all: a Spark line
whose pyspark is not the one installed here runs in a Python of its own (``python=``), and
``RemoteEngine`` forwards every call of the adapter interface to it.

A worker rebuilds its engine from a spec: ``("name", n)`` (built-in, entry point or command
engine), ``("class", "module:Qual")`` for an importable class constructible without arguments,
or ``("class", "module:Qual", {kwargs})``. It is a child process started with ``python -m
conformance.isolation FD`` and speaks pickled messages over an inherited socket (not stdout,
which native code and JVMs write to).
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import signal
import subprocess
import sys
import tempfile
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from typing import Any, Mapping, Sequence

from conformance.engines.base import Capabilities, Engine
from conformance.model import Case, Expected, TableRef

DEFAULT_TIMEOUT_S = 300.0


def engine_spec(engine: Engine, commands: Sequence[str] = ()) -> tuple | None:
    """How a worker can rebuild ``engine``: ("name", n) or ("class", "module:Qual"), or None."""
    from conformance.engines.registry import engine_factories

    if engine.name in engine_factories(commands):
        return ("name", engine.name)
    cls = type(engine)
    if "<locals>" not in cls.__qualname__ and cls.__module__ != "__main__":
        try:
            cls()
        except Exception:  # noqa: BLE001 - needs arguments: cannot be rebuilt, run in-process
            return None
        return ("class", f"{cls.__module__}:{cls.__qualname__}")
    return None


def _build(spec: tuple, commands: Sequence[str]) -> Engine:
    kind, value = spec[0], spec[1]
    if kind == "name":
        from conformance.engines.registry import load_engines

        return load_engines([value], commands=commands)[0]
    module, _, qual = value.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    kwargs = spec[2] if len(spec) > 2 else {}
    return obj(**kwargs)


# ----------------------------------------------------------------------------------------------
# The child
# ----------------------------------------------------------------------------------------------


def _raised(exc: BaseException) -> tuple:
    """An exception as plain data (the kit's kinds keep their kind and feature)."""
    return ("raise", type(exc).__name__, getattr(exc, "kind", None), str(exc), getattr(exc, "feature", None))


def _answer(engine: Engine, job: tuple) -> tuple:
    """The answer to one job: ``("ok", value)`` or the exception as data."""
    from conformance.runner import check_cell

    if job[0] == "check":
        _, case, expected, table = job
        try:
            return ("ok", check_cell(case, expected, engine, table))
        except BaseException as exc:  # noqa: BLE001 - report, keep serving
            return ("ok", ("error", f"harness error in worker: {type(exc).__name__}: {exc}", ""))
    _, method, args, kwargs = job
    try:
        return ("ok", getattr(engine, method)(*args, **kwargs))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the parent re-raises it
        return _raised(exc)


def _serve(conn: Connection) -> None:
    """Worker loop: build the engine, then answer jobs until told to stop (every job carries an id,
    and its answer is sent with that id). Jobs are answered one at a time, or as many at once as the
    engine takes (``Engine.concurrency``: an adapter that says so is thread-safe for that many calls)."""
    spec, commands = conn.recv()
    try:
        engine = _build(spec, commands)
    except BaseException as exc:  # noqa: BLE001 - the parent reports it
        conn.send((0, _raised(exc)))
        return
    conn.send((0, ("ok", None)))
    calls = max(1, int(getattr(engine, "concurrency", 1) or 1))
    pool = None
    if calls > 1:
        import threading
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(calls, thread_name_prefix="lakeconf-call")
        sending = threading.Lock()

        def answer(job_id: int, job: tuple) -> None:
            try:
                reply = _answer(engine, job)
            except BaseException as exc:  # noqa: BLE001 - a Ctrl-C in a call: the parent re-raises it
                reply = _raised(exc)
            with sending:
                conn.send((job_id, reply))
    try:
        while True:
            try:
                message = conn.recv()
            except EOFError:  # the parent went away
                break
            if message is None:
                break
            job_id, job = message
            if pool is None:
                conn.send((job_id, _answer(engine, job)))
            else:
                pool.submit(answer, job_id, job)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        engine.close()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m conformance.isolation FD``: serve one engine over the inherited socket FD."""
    argv = list(sys.argv[1:] if argv is None else argv)
    conn = Connection(int(argv[0]))
    if not os.environ.get("LAKECONF_DEBUG"):
        # Native engines print to fds 1/2 directly (e.g. Daft's pipeline errors); verdicts carry
        # the message, so their noise would only break the progress line.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    _serve(conn)
    return 0


# ----------------------------------------------------------------------------------------------
# The parent's side
# ----------------------------------------------------------------------------------------------


def _signal_name(code: int | None) -> str:
    if code is None:
        return "no exit code"
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


_SOURCE_DIR: str | None = None


def source_path() -> str:
    """A directory holding just this kit's two packages (symlinks), for a worker's PYTHONPATH.

    A worker of another interpreter must import this very kit, but not this interpreter's other
    packages (its pyspark, say): so the kit goes on the path alone.
    """
    global _SOURCE_DIR
    if _SOURCE_DIR is None or not os.path.isdir(_SOURCE_DIR):
        import conformance
        import reference_impl

        path = tempfile.mkdtemp(prefix="lakeconf-src-")
        for module in (conformance, reference_impl):
            package_dir = os.path.dirname(os.path.abspath(module.__file__))
            os.symlink(package_dir, os.path.join(path, os.path.basename(package_dir)))
        _SOURCE_DIR = path
    return _SOURCE_DIR


class WorkerDied(Exception):
    """The worker crashed or timed out (the message says which)."""


class RemoteError(Exception):
    """An exception the engine raised in the worker that is none of the kit's kinds."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name

    def __str__(self) -> str:
        return f"{self.type_name}: {self.args[0]}"


def _reraise(answer: tuple) -> None:
    from reference_impl.errors import Internal, InvalidTable, LakeconfError, Unsupported

    _, type_name, kind, message, feature = answer
    cls = {"invalid_table": InvalidTable, "unsupported": Unsupported, "internal": Internal}.get(kind)
    if cls is Unsupported:
        raise Unsupported(message, feature=feature)
    if cls is not None:
        raise cls(message)
    if kind is not None:
        raise LakeconfError(message)
    raise RemoteError(type_name, message)


class Worker:
    """One engine in a child process; ``check`` judges one cell there, ``call`` runs one method.

    Calls may come from several threads; each waits for its own answer, and the worker answers them
    one at a time, or side by side when its engine takes several at once. A worker that dies fails
    every call in flight with the reason and is started again by the next call; a call that does
    not answer in time kills the worker (and so fails the others in flight too).
    """

    def __init__(self, engine_name: str, spec: tuple, commands: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT_S,
                 *, python: str | None = None, env: Mapping[str, str] | None = None) -> None:
        import threading

        self.engine_name = engine_name
        self.spec = spec
        self.commands = tuple(commands)
        self.timeout = timeout
        self.python = python or sys.executable
        self.env = dict(env or {})
        self._proc: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self._lock = threading.RLock()  # starting, stopping, sending
        self._pending: dict[int, Any] = {}  # job id -> Future
        self._next_id = 1
        self._death: str | None = None  # why the current process is going away, once known

    # -- process ----------------------------------------------------------------------------

    def _start(self) -> None:
        import threading

        parent, child = Pipe(duplex=True)
        env = {**os.environ, **self.env}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (source_path(), env.get("PYTHONPATH", "")) if p)
        proc = subprocess.Popen(
            [self.python, "-m", "conformance.isolation", str(child.fileno())],
            pass_fds=(child.fileno(),), env=env, stdin=subprocess.DEVNULL,
        )
        child.close()
        self._proc, self._conn, self._death = proc, parent, None
        parent.send((self.spec, self.commands))
        if not parent.poll(120.0):
            self._kill(f"{self.engine_name} did not start within 120s (killed)")
            raise WorkerDied(f"{self.engine_name} did not start within 120s")
        try:
            _, status = parent.recv()
        except (EOFError, OSError):
            code = self._reap()
            self._close_handles()
            raise WorkerDied(f"{self.engine_name} crashed ({_signal_name(code)}) while starting") from None
        if status[0] != "ok":
            self._kill("start-up failed")
            _reraise(status)
        self._pending = {}  # the calls in flight belong to this process: they fail with it
        threading.Thread(target=self._receive, args=(proc, parent, self._pending), name=f"lakeconf-recv-{self.engine_name}",
                         daemon=True).start()

    def _reap(self) -> int | None:
        assert self._proc is not None
        try:
            return self._proc.wait(10)
        except subprocess.TimeoutExpired:
            return None

    def _receive(self, proc: subprocess.Popen, conn: Connection, pending: dict[int, Any]) -> None:
        """Hand each answer to the call waiting for it; on the worker's death, fail every call in flight."""
        while True:
            try:
                job_id, answer = conn.recv()
            except (EOFError, OSError):
                break
            with self._lock:
                future = pending.pop(job_id, None)
            if future is not None:
                future.set_result(answer)
        # The socket closed: the worker is dying; let it be reaped so its exit status is known.
        try:
            code = proc.wait(10)
        except subprocess.TimeoutExpired:
            code = None
        with self._lock:
            reason = self._death if proc is self._proc and self._death else (
                f"{self.engine_name} crashed ({_signal_name(code)}) while working")
            orphans = list(pending.values())
            pending.clear()
        for future in orphans:
            future.set_exception(WorkerDied(reason))

    def _kill(self, reason: str) -> None:
        with self._lock:
            if self._proc is None:
                return
            self._death = reason
            if self._proc.poll() is None:
                self._proc.kill()

    def _close_handles(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._proc, self._conn = None, None

    # -- calls ------------------------------------------------------------------------------

    def _send(self, job: tuple, timeout: float | None) -> Any:
        from concurrent.futures import Future
        from concurrent.futures import TimeoutError as FutureTimeout

        with self._lock:
            if self._proc is None or self._proc.poll() is not None or self._death:
                if self._proc is not None:
                    self._reap()
                    self._close_handles()
                self._start()
            job_id, self._next_id = self._next_id, self._next_id + 1
            future: Future = Future()
            self._pending[job_id] = future
            try:
                assert self._conn is not None
                self._conn.send((job_id, job))
            except (OSError, BrokenPipeError):
                pass  # the receiver reports how the worker died
        limit = timeout or self.timeout
        try:
            answer = future.result(limit)
        except FutureTimeout:
            self._kill(f"{self.engine_name} did not answer within {limit:.0f}s (killed)")
            raise WorkerDied(f"{self.engine_name} did not answer within {limit:.0f}s (killed)") from None
        if answer[0] == "raise":
            _reraise(answer)
        return answer[1]

    def call(self, method: str, *args: Any, timeout: float | None = None, **kwargs: Any) -> Any:
        """``engine.<method>(*args, **kwargs)`` in the worker; its exception re-raised here."""
        return self._send(("call", method, args, kwargs), timeout)

    def check(self, case: Case, expected: Expected, table: TableRef) -> tuple[str, str, str]:
        """check_cell in the worker; a crash or a time-out becomes an *error* verdict."""
        # Build steps may hold lambdas (Raw); the reader needs none of them.
        light = dataclasses.replace(case, steps=())
        try:
            return self._send(("check", light, expected, table), None)
        except WorkerDied as exc:
            message = str(exc).replace("while working", "while reading")
            return "error", message, ""

    def close(self) -> None:
        """Stop the worker (after the calls in flight)."""
        with self._lock:
            proc, conn = self._proc, self._conn
            if proc is None:
                return
            self._death = "closed"
        try:
            if proc.poll() is None and conn is not None:
                conn.send(None)
                proc.wait(30)
        except (OSError, EOFError, BrokenPipeError, subprocess.TimeoutExpired):
            pass
        if proc.poll() is None:
            proc.kill()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        with self._lock:
            if self._proc is proc:
                self._close_handles()


# The name the runner has always used for a reading worker.
EngineWorker = Worker


class RemoteEngine(Engine):
    """An engine that lives in a worker (another interpreter): every adapter call is forwarded.

    The harness treats it as in-process (it manages its own worker); ``unavailable`` is the reason
    to give when the worker cannot be had at all (no interpreter set up). With ``workers`` > 1 it
    keeps that many independent workers (for Spark, as many JVMs); with ``calls`` > 1 each worker's
    engine takes that many calls at once (for Spark, jobs side by side in one JVM). It takes
    ``workers * calls`` jobs at once (``concurrency``): each calling thread keeps to one worker, so a
    job's calls (its log mark, its read, what the log gained) all reach the same process.
    """

    in_process = True

    def __init__(self, name: str, spec: tuple, *, python: str | None, unavailable: str | None = None,
                 timeout: float = 1800.0, workers: int = 1, calls: int = 1) -> None:
        import threading

        self.name = name
        self._spec = spec
        self._python = python
        self._unavailable = unavailable
        self._timeout = timeout
        self._workers: list[Worker | None] = [None] * max(1, workers)
        self.concurrency = len(self._workers) * max(1, calls)
        self._lock = threading.Lock()
        self._local = threading.local()
        self._next_slot = 0
        self._cache: dict[str, Any] = {}

    def _slot(self, index: int) -> Worker:
        with self._lock:
            worker = self._workers[index]
            if worker is None:
                worker = self._workers[index] = Worker(self.name, self._spec, timeout=self._timeout, python=self._python)
            return worker

    def _w(self) -> Worker:
        """The calling thread's worker (threads are dealt the workers in turn)."""
        slot = getattr(self._local, "slot", None)
        if slot is None:
            with self._lock:
                slot = self._local.slot = self._next_slot % len(self._workers)
                self._next_slot += 1
        return self._slot(slot)

    def _mine(self) -> Worker | None:
        """The calling thread's worker if it has started one (the log calls start nothing)."""
        slot = getattr(self._local, "slot", None)
        return None if slot is None else self._workers[slot]

    def _cached(self, method: str) -> Any:
        if method not in self._cache:
            self._cache[method] = self._w().call(method)
        return self._cache[method]

    def available(self) -> str | None:
        if self._unavailable:
            return self._unavailable
        try:
            return self._cached("available")
        except Exception as exc:  # noqa: BLE001 - a worker that cannot start makes the engine unavailable
            return f"its worker ({self._python}) failed: {exc}"

    def version(self) -> str:
        if self._unavailable:
            return "not set up"
        return self._cached("version")

    def capabilities(self) -> Capabilities:
        if self._unavailable:
            return Capabilities()
        return self._cached("capabilities")

    def driver_problems(self) -> dict[str, str]:
        """The formats the worker's engine does not offer here, and why (``MultiFormatEngine``)."""
        if self._unavailable:
            return {}
        try:
            return self._cached("driver_problems")
        except RemoteError as exc:
            if exc.type_name == "AttributeError":  # an engine of one format: nothing to say
                return {}
            raise

    def start(self) -> None:
        """Start every worker's engine now, side by side (so JVM start-ups are timed as start-up)."""
        if len(self._workers) == 1:
            self._w().call("start")
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(self._workers)) as pool:
            for future in [pool.submit(self._slot(i).call, "start") for i in range(len(self._workers))]:
                future.result()

    def read(self, table, *, at=None, timestamp=None, ref=None, columns=None):
        kw = {"ref": ref} if ref is not None else {}
        return self._w().call("read", table, at=at, timestamp=timestamp, columns=columns, **kw)

    def describe(self, table, *, at=None, timestamp=None, ref=None):
        kw = {"ref": ref} if ref is not None else {}
        return self._w().call("describe", table, at=at, timestamp=timestamp, **kw)

    def write(self, table, steps) -> None:
        self._w().call("write", table, list(steps))

    def reproduction(self, table, at=None):
        return self._w().call("reproduction", table, at)

    def log_mark(self) -> Any:
        worker = self._mine()
        return worker.call("log_mark") if worker is not None else None

    def log_since(self, mark: Any) -> str:
        worker = self._mine()
        return worker.call("log_since", mark) if worker is not None else ""

    def close(self) -> None:
        with self._lock:
            workers, self._workers = self._workers, [None] * len(self._workers)
        for worker in workers:
            if worker is not None:
                worker.close()


if __name__ == "__main__":
    raise SystemExit(main())
