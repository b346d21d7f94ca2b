"""Which engines exist: the built-in adapters, vendor adapters, and command-line engines.

Vendors plug in without forking the kit, in one of two ways.

1. **Python entry point** in the group ``lakeconf.engines`` of the vendor's package::

       [project.entry-points."lakeconf.engines"]
       myengine = "my_package.lakeconf_adapter:MyEngine"

   The object is an ``conformance.engines.base.Engine`` subclass (instantiated with no
   arguments), a factory returning an ``Engine``, or an ``Engine`` instance. The entry point's
   name is the engine's name in ``--engines`` and in the report.

2. **Command contract**: any program, in any language, named with
   ``lakeconf run --engine-cmd NAME='COMMAND ARGS'`` (repeatable) or the environment variable
   ``LAKECONF_ENGINE_CMDS='name1=command one;name2=command two'``. The kit runs::

       COMMAND ARGS read --format FORMAT --uri URI --out FILE [--version N] [--timestamp ISO] [--ref NAME]

   and the program writes the table's logical rows to FILE as Parquet or Arrow IPC (file or
   stream format; detected by content). Exit 0 = rows written; exit 3 = the table needs a
   feature the engine does not support (first line of stderr = the reason; reported as
   *unsupported*); any other exit = an error (the end of stderr is the message). Optional:
   ``COMMAND ARGS version`` prints a version string; ``COMMAND ARGS capabilities`` prints JSON
   ``{"read": ["myformat"], "unsupported": {"myformat": {"someFeature": "why"}}}`` (gaps per format;
   a flat ``{"feature": "why"}`` map applies to every format it reads). Object-store
   credentials reach the program only through its environment (``AWS_ENDPOINT_URL``,
   ``AWS_ACCESS_KEY_ID``, ...), never on its command line.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from importlib import metadata as _metadata
from typing import Any, Callable, Iterable, Mapping, Sequence

import pyarrow as pa

from conformance.engines.base import Capabilities, Engine
from conformance.model import TableRef

ENTRY_POINT_GROUP = "lakeconf.engines"
ENV_COMMANDS = "LAKECONF_ENGINE_CMDS"
EXIT_UNSUPPORTED = 3  # command contract: "valid table, feature not supported"
EXIT_INVALID_TABLE = 4  # command contract: "the table breaks the spec"; any other failure is no verdict
COMMAND_TIMEOUT_S = 600


class EngineConfigError(Exception):
    """An engine name or specification the user gave cannot be used (a usage error)."""


# Engines of no one format (each format adds its driver for them); imported lazily so one broken
# engine cannot hide the others.
_GENERIC: dict[str, str] = {
    "reference": "conformance.engines.reference:ReferenceEngine",
    "duckdb": "conformance.engines.duckdb:DuckDBEngine",
    "polars": "conformance.engines.polars:PolarsEngine",
    "daft": "conformance.engines.daft:DaftEngine",
}


def _spark_lines() -> dict[str, Callable[[], Engine]]:
    """One engine per pinned Spark line (``spark``, ``spark-3.5``)."""
    from conformance.engines.spark import lines

    def make(line: str) -> Callable[[], Engine]:
        def build() -> Engine:
            from conformance.engines.spark import engine

            return engine(line)

        return build

    return {spark_line.engine: make(name) for name, spark_line in lines.LINES.items()}


def _factory(spec: str) -> Callable[[], Engine]:
    def make() -> Engine:
        import importlib

        module, _, attr = spec.partition(":")
        return getattr(importlib.import_module(module), attr)()

    return make


def _builtin() -> dict[str, Callable[[], Engine]]:
    """Built-in adapters by name: the reference, each format's own engines, then the multi-format ones."""
    from conformance import formats

    out = {"reference": _factory(_GENERIC["reference"])}
    for plugin in formats.all_formats().values():
        for name, spec in plugin.engines.items():
            out.setdefault(name, _factory(spec))
    for name, spec in _GENERIC.items():
        out.setdefault(name, _factory(spec))
    for name, build in _spark_lines().items():
        out.setdefault(name, build)
    return out


def builtin_names() -> tuple[str, ...]:
    """The names of the built-in engines, in their default order."""
    return tuple(_builtin())


# Engines that cost a JVM and jar resolution: in the default set only when asked for by name
# (--engines) or by their environment switch.
def _opt_in() -> dict[str, str]:
    from conformance.engines.spark import lines

    return {spark_line.engine: "LAKECONF_SPARK" for spark_line in lines.LINES.values()}


OPT_IN: dict[str, str] = _opt_in()


def opted_in(name: str) -> bool:
    """Whether an opt-in engine's switch (e.g. LAKECONF_SPARK=1) puts it in the default set."""
    switch = OPT_IN.get(name)
    return switch is None or os.environ.get(switch, "") not in ("", "0", "false")


def _entry_points() -> dict[str, Callable[[], Engine]]:
    """Vendor engines declared in the ``lakeconf.engines`` entry point group."""
    out: dict[str, Callable[[], Engine]] = {}
    for ep in _metadata.entry_points(group=ENTRY_POINT_GROUP):

        def factory(ep=ep) -> Engine:
            obj = ep.load()
            engine = obj() if isinstance(obj, type) or (callable(obj) and not isinstance(obj, Engine)) else obj
            if not isinstance(engine, Engine):
                raise EngineConfigError(
                    f"entry point {ep.name} = {ep.value} gave {type(engine).__name__}, not a conformance Engine"
                )
            engine.name = ep.name
            return engine

        out[ep.name] = factory
    return out


def parse_command_specs(specs: Iterable[str]) -> dict[str, str]:
    """``name=command`` strings (from --engine-cmd and LAKECONF_ENGINE_CMDS) -> {name: command}."""
    out: dict[str, str] = {}
    env = os.environ.get(ENV_COMMANDS, "")
    items = [s for s in env.split(";") if s.strip()] + list(specs)
    for spec in items:
        name, sep, command = spec.partition("=")
        name, command = name.strip(), command.strip()
        if not sep or not name or not command:
            raise EngineConfigError(f"engine command {spec!r} is not NAME=COMMAND")
        out[name] = command
    return out


def engine_factories(commands: Iterable[str] = ()) -> dict[str, Callable[[], Engine]]:
    """Every known engine by name: built-in, then entry points, then commands (later ones win)."""
    out = _builtin()
    out.update(_entry_points())
    for name, command in parse_command_specs(commands).items():
        out[name] = lambda name=name, command=command: CommandEngine(name, command)
    return out


def load_engines(
    names: Sequence[str] | None = None, *, commands: Iterable[str] = (), include_opt_in: bool = False
) -> list[Engine]:
    """Instantiate the named engines, in the given order.

    Without ``names``: every known engine, except opt-in ones (Spark) whose switch is off, unless
    ``include_opt_in`` (``lakeconf engines`` lists them all).
    """
    factories = engine_factories(commands)
    wanted = list(names) if names else [n for n in factories if include_opt_in or opted_in(n)]
    unknown = [n for n in wanted if n not in factories]
    if unknown:
        raise EngineConfigError(
            f"unknown engine(s) {', '.join(unknown)}; known: {', '.join(factories)}"
        )
    return [factories[n]() for n in wanted]


# ----------------------------------------------------------------------------------------------
# The command contract
# ----------------------------------------------------------------------------------------------


def read_arrow_file(path: str) -> pa.Table:
    """A Parquet, Arrow IPC file or Arrow IPC stream file as a table (detected by content)."""
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    with open(path, "rb") as fh:
        head = fh.read(6)
    if head[:4] == b"PAR1":
        return pq.read_table(path)
    if head == b"ARROW1":
        with pa.memory_map(path) as source:
            return ipc.open_file(source).read_all()
    with pa.memory_map(path) as source:
        return ipc.open_stream(source).read_all()


class CommandEngine(Engine):
    """An engine behind the command contract (see the module docstring)."""

    def __init__(self, name: str, command: str) -> None:
        self.name = name
        self.argv = shlex.split(command)
        self._caps: Capabilities | None = None
        self._version: str | None = None

    def _run(self, args: list[str], env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.argv + args, capture_output=True, text=True, timeout=timeout,
            env={**os.environ, **(env or {})},
        )

    def available(self) -> str | None:
        try:
            proc = self._run(["version"], timeout=30)
            lines = proc.stdout.strip().splitlines()
            self._version = lines[0] if proc.returncode == 0 and lines else "unknown"
        except FileNotFoundError:
            return f"command not found: {self.argv[0]}"
        except Exception as exc:
            return f"command {self.argv[0]} failed to start: {exc}"
        return None

    def version(self) -> str:
        if self._version is None:
            try:
                proc = self._run(["version"], timeout=30)
                text = proc.stdout.strip().splitlines()
                self._version = text[0] if proc.returncode == 0 and text else "unknown"
            except Exception:
                self._version = "unknown"
        return self._version

    def capabilities(self) -> Capabilities:
        if self._caps is None:
            from conformance import formats

            read: frozenset[str] = frozenset(formats.names())
            gaps: dict[str, dict[str, str]] = {}
            try:
                proc = self._run(["capabilities"], timeout=30)
                if proc.returncode == 0 and proc.stdout.strip():
                    data = json.loads(proc.stdout)
                    read = frozenset(data.get("read", sorted(read)))
                    gaps = _gaps_by_format(data.get("unsupported") or {}, read)
            except Exception:  # noqa: BLE001 - optional sub-command: "reads everything, says when it cannot"
                pass
            self._caps = Capabilities(read=read, read_features={f: None for f in read}, unsupported=gaps)
        return self._caps

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        from conformance.engines.errors import EngineError
        from reference_impl.errors import InvalidTable, Unsupported

        with tempfile.TemporaryDirectory(prefix="lakeconf-cmd-") as tmp:
            out = os.path.join(tmp, "rows")
            args = ["read", "--format", table.format, "--uri", table.uri, "--out", out]
            if at is not None:
                args += ["--version", str(at)]
            if timestamp is not None:
                args += ["--timestamp", timestamp]
            if ref is not None:
                args += ["--ref", ref]
            env = {k.upper(): v for k, v in table.storage_options.items()}
            proc = self._run(args, env=env, timeout=COMMAND_TIMEOUT_S)
            err = proc.stderr.strip()
            if proc.returncode == EXIT_UNSUPPORTED:
                raise Unsupported(err.splitlines()[0] if err else "the engine command reported unsupported")
            if proc.returncode == EXIT_INVALID_TABLE:
                raise InvalidTable(err.splitlines()[0] if err else "the engine command reported an invalid table")
            if proc.returncode != 0:
                tail = " | ".join(err.splitlines()[-3:]) if err else "(no stderr)"
                raise EngineError(f"{self.argv[0]} exited {proc.returncode}: {tail}")
            if not os.path.exists(out):
                raise EngineError(f"{self.argv[0]} exited 0 but wrote no file at --out")
            result = read_arrow_file(out)
        if columns:
            result = result.select(list(columns))
        return result


def _gaps_by_format(data: Mapping[str, Any], read: frozenset[str]) -> dict[str, dict[str, str]]:
    """The ``unsupported`` answer of a command: per format, or one flat map for every format it reads."""
    if data and all(isinstance(v, Mapping) for v in data.values()):
        return {str(f): {str(k): str(v) for k, v in gaps.items()} for f, gaps in data.items()}
    flat = {str(k): str(v) for k, v in data.items() if not isinstance(v, Mapping)}
    return {f: dict(flat) for f in read} if flat else {}
