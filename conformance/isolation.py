"""Engine isolation: each reader runs in its own worker process, so a crash or a hang costs one cell.

Native engines (Rust, C++) can abort the process on a malformed table, and an exception handler
cannot catch a segfault. With isolation on, the runner sends each cell to a long-lived worker
per engine (spawned once, so imports are paid once); if the worker dies, the cell is an *error*
naming the exit signal and the worker is restarted for the next cell; if it does not answer
within the time limit, it is killed and the cell is an *error* saying so.

A worker rebuilds its engine from a spec: a registry name (built-in, entry point or command
engine) or ``module:Class`` for an importable class constructible without arguments.
"""

from __future__ import annotations

import dataclasses
import importlib
import multiprocessing as mp
import signal
from typing import Any, Sequence

from conformance.engines.base import Engine
from conformance.model import Case, Expected, TableRef

DEFAULT_TIMEOUT_S = 300.0


def engine_spec(engine: Engine, commands: Sequence[str] = ()) -> tuple[str, str] | None:
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


def _build(spec: tuple[str, str], commands: Sequence[str]) -> Engine:
    kind, value = spec
    if kind == "name":
        from conformance.engines.registry import load_engines

        return load_engines([value], commands=commands)[0]
    module, _, qual = value.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj()


def _serve(conn, spec: tuple[str, str], commands: Sequence[str]) -> None:
    """Worker loop: receive (case, expected, table), answer check_cell's verdict."""
    import os

    from conformance.runner import check_cell

    if not os.environ.get("LAKECONF_DEBUG"):
        # Native engines print to fds 1/2 directly (e.g. Daft's pipeline errors); the verdict
        # carries the message, so their noise would only break the progress line.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    engine = _build(spec, commands)
    try:
        while True:
            job = conn.recv()
            if job is None:
                break
            case, expected, table = job
            try:
                verdict = check_cell(case, expected, engine, table)
            except BaseException as exc:  # noqa: BLE001 - report, keep serving
                verdict = ("error", f"harness error in worker: {type(exc).__name__}: {exc}", "")
            conn.send(verdict)
    finally:
        engine.close()


def _signal_name(code: int | None) -> str:
    if code is None:
        return "no exit code"
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class EngineWorker:
    """One engine in a child process; ``check`` judges one cell there."""

    def __init__(self, engine_name: str, spec: tuple[str, str], commands: Sequence[str] = (), timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.engine_name = engine_name
        self.spec = spec
        self.commands = tuple(commands)
        self.timeout = timeout
        self._ctx = mp.get_context("spawn")  # fork would copy engine threads' locks mid-flight
        self._proc = None
        self._conn = None

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_serve, args=(child, self.spec, self.commands), daemon=True,
                                 name=f"lakeconf-{self.engine_name}")
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent

    def _stop(self, kill: bool = False) -> None:
        if self._proc is None:
            return
        try:
            if not kill and self._proc.is_alive():
                self._conn.send(None)
                self._proc.join(5)
        except (OSError, EOFError, BrokenPipeError):
            pass
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)
        self._conn.close()
        self._proc, self._conn = None, None

    def check(self, case: Case, expected: Expected, table: TableRef) -> tuple[str, str, str]:
        """check_cell in the worker; a crash or a time-out becomes an *error* verdict."""
        if self._proc is None or not self._proc.is_alive():
            self._start()
        # Build steps may hold lambdas (Raw); the reader needs none of them.
        light = dataclasses.replace(case, steps=())
        try:
            self._conn.send((light, expected, table))
            if self._conn.poll(self.timeout):
                return self._conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            self._proc.join(5)  # the pipe closed: the worker is dying; let it be reaped
        alive = self._proc.is_alive()
        code = None if alive else self._proc.exitcode
        self._stop(kill=True)
        if alive:
            return "error", f"{self.engine_name} did not answer within {self.timeout:.0f}s (killed)", ""
        return "error", f"{self.engine_name} crashed ({_signal_name(code)}) while reading", ""

    def close(self) -> None:
        """Stop the worker."""
        self._stop()
