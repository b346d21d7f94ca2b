"""Hostile input: mutated copies of valid tables, read and validated by the reference in a watched worker.

The kit promises that bad input gets a named error (invalid table, unsupported, internal), never
another exception, never a read outside the table root, never unbounded memory, never a hang. This
module checks that promise for every format that declares a ``HostileSpec`` (its file kinds and a
few valid seed cases), with no format named here:

* the seed cases are built once by the reference writer;
* each mutant is a fresh copy of one seed with one mutation applied to one file (or directory):
  bit flips, truncation, garbage, JSON structure (wrong types, path attacks, deep nesting, huge
  numbers), Avro counts and decompression bombs, GZIP bombs, symbolic links out of the root;
* a worker process (``conformance.hostile.worker``) reads and validates it with the reference,
  under a watchdog: a signal, a hang or runaway memory costs the worker, never the campaign;
* ``Outcome.breaks`` says which part of the promise a mutant broke, if any.

Mutant ``i`` of a campaign is drawn from ``random.Random(f"{seed}:{format}:{i}")``. The tables are
rebuilt with fresh file names each run, so a break is reproduced from the mutant kept on disk
(``keep``), not from its number.
"""

from __future__ import annotations

import json
import os
import random
import re
import select
import shutil
import subprocess
import sys
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from reference_impl.common import bounded

PEAK_MB_LIMIT = 1024  # the promise: no mutant drives a read or validation past this
KILL_MB = 3072  # the watchdog's hard stop, well above the limit so that the overshoot is measured
TIMEOUT_S = 60.0  # per mutant (read and validate): a hang, not a slow table
BOMB_BYTES = 256 << 20  # what the bombs inflate to: above the kit's inflate limit, below the kill line


@dataclass(frozen=True, slots=True)
class FileKind:
    """A kind of file a format's table holds, recognised by its root-relative path."""

    name: str  # "commit", "manifest", ...
    pattern: str  # regular expression matched (search) against the root-relative path
    structure: str  # json | ndjson | avro | parquet | binary | text: which mutations apply

    def matches(self, rel: str) -> bool:
        return re.search(self.pattern, rel) is not None


@dataclass(frozen=True, slots=True)
class HostileSpec:
    """What a format offers the hostile-input campaign."""

    seeds: tuple[str, ...]  # ids of valid cases, built by the reference writer
    kinds: tuple[FileKind, ...]  # first match wins
    directories: str = r"^$"  # root-relative directories that may be swapped for a link (regex)
    # environment the worker reads and validates this format's mutants under (e.g. to send small
    # files down a path the reference takes only for big ones)
    env: tuple[tuple[str, str], ...] = ()

    def kind_of(self, rel: str) -> FileKind | None:
        return next((k for k in self.kinds if k.matches(rel)), None)


def spec_of(fmt: str) -> HostileSpec | None:
    """The hostile spec a registered format declares (``FormatPlugin.hostile``), or None."""
    from conformance import formats

    plugin = formats.get(fmt)
    return plugin.load("hostile") if plugin.hostile else None


def formats_with_spec() -> list[str]:
    from conformance import formats

    return [name for name, p in formats.all_formats().items() if p.hostile]


# --------------------------------------------------------------------------------------------
# Mutations: each takes (rng, table dir, root-relative path, outside dir) and says what it did.


def _files(root: str) -> list[str]:
    out = []
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            out.append(os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/"))
    return sorted(out)


def _read(root: str, rel: str) -> bytes:
    with open(os.path.join(root, rel), "rb") as fh:
        return fh.read()


def _write(root: str, rel: str, data: bytes) -> None:
    with open(os.path.join(root, rel), "wb") as fh:
        fh.write(data)


def _flip(rng: random.Random, root: str, rel: str, _out: str) -> str:
    data = bytearray(_read(root, rel))
    if not data:
        return "flip (empty file, unchanged)"
    n = rng.choice((1, 1, 2, 8))
    for _ in range(n):
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
    _write(root, rel, bytes(data))
    return f"flip {n} bit(s)"


def _flip_tail(rng: random.Random, root: str, rel: str, _out: str) -> str:
    # Footers (Parquet, Puffin) and trailers live at the end: aim there.
    data = bytearray(_read(root, rel))
    if len(data) < 2:
        return "flip-tail (too short, unchanged)"
    i = len(data) - 1 - rng.randrange(min(len(data) - 1, 64))
    data[i] = rng.randrange(256)
    _write(root, rel, bytes(data))
    return f"byte {i - len(data)} from the end set"


def _truncate(rng: random.Random, root: str, rel: str, _out: str) -> str:
    data = _read(root, rel)
    keep = rng.randrange(max(1, len(data)))
    _write(root, rel, data[:keep])
    return f"truncate to {keep} of {len(data)} bytes"


def _empty(_rng: random.Random, root: str, rel: str, _out: str) -> str:
    _write(root, rel, b"")
    return "zero length"


def _garbage(rng: random.Random, root: str, rel: str, _out: str) -> str:
    n = rng.choice((1, 7, 100, 4096))
    _write(root, rel, rng.randbytes(n))
    return f"{n} random bytes"


def _append(rng: random.Random, root: str, rel: str, _out: str) -> str:
    with open(os.path.join(root, rel), "ab") as fh:
        fh.write(rng.randbytes(rng.choice((1, 16, 1000))))
    return "random bytes appended"


def _hostile_values(rng: random.Random, outside: str, rel: str) -> list[Any]:
    """Values a hostile writer could put anywhere in a JSON document."""
    base = os.path.basename(rel)
    return [
        None, -1, 0, 2**63, -(2**63) - 1, 2**64 + 5, 1.5, True, "", "x", [], {}, [None], {"": None},
        "\u0000", "²", "9" * 400, "9" * 5000, "a" * 5000,
        f"../outside/{base}", f"{outside}/{rel}", f"file://{outside}/{rel}", "%2E%2E/outside/" + base,
        "..%2Foutside%2F" + base, "/etc/passwd", "s3://another-bucket/x/" + base, "data/../../outside/" + base,
    ]


def _json_nodes(obj: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    yield path, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _json_nodes(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _json_nodes(v, path + (i,))


def _set(obj: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    node = obj
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return obj


def _mutate_json_doc(rng: random.Random, doc: Any, outside: str, rel: str) -> tuple[Any, str]:
    nodes = list(_json_nodes(doc))
    path, node = rng.choice(nodes)
    choice = rng.randrange(5)
    if choice == 0 and isinstance(node, dict) and node:
        key = rng.choice(list(node))
        del node[key]
        return doc, f"key {'/'.join(map(str, path + (key,)))} removed"
    if choice == 1 and isinstance(node, str):
        value = rng.choice(_hostile_values(rng, outside, rel)[16:])  # the path attacks
        return _set(doc, path, value), f"{'/'.join(map(str, path))} = {str(value)[:60]!r}"
    value = rng.choice(_hostile_values(rng, outside, rel))
    return _set(doc, path, value), f"{'/'.join(map(str, path)) or 'document'} = {str(value)[:60]!r}"


def _json_value(rng: random.Random, root: str, rel: str, outside: str) -> str:
    """A node of the JSON document (of one line, for NDJSON) replaced or removed."""
    text = _read(root, rel).decode("utf-8", "replace")
    lines = text.split("\n")
    candidates = [i for i, ln in enumerate(lines) if ln.strip()]
    if not candidates:
        return "json (no document, unchanged)"
    i = rng.choice(candidates)
    try:
        doc = json.loads(lines[i])
    except ValueError:
        try:  # a pretty-printed document: the whole file is one value
            doc, i, lines = json.loads(text), 0, [text]
        except ValueError:
            return "json (not JSON, unchanged)"
    doc, what = _mutate_json_doc(rng, doc, outside, rel)
    lines[i] = json.dumps(doc, allow_nan=True)
    _write(root, rel, "\n".join(lines).encode())
    return what


def _json_raw(rng: random.Random, root: str, rel: str, _out: str) -> str:
    """Text JSON parsers meet: deep nesting, numbers beyond every type, duplicate keys, NaN."""
    text = _read(root, rel).decode("utf-8", "replace")
    depth = rng.choice((1_000, 100_000))
    pieces = [
        ("deep nesting", "[" * depth + "]" * depth),
        ("deep objects", '{"a":' * depth + "1" + "}" * depth),
        ("huge number", "1" + "0" * 400),
        ("huge exponent", "1e999999"),
        ("NaN", "NaN"),
    ]
    what, piece = rng.choice(pieces)
    spots = [m.start() for m in re.finditer(r"(?<=:)\s*(-?\d|\"|\[|\{|true|false|null)", text)]
    if not spots:
        _write(root, rel, piece.encode())
        return f"{what} as the whole file"
    at = rng.choice(spots)
    # Replace the value starting there by the piece (up to the next , or } at this level, roughly).
    end = at
    m = re.match(r"\s*(\"(?:[^\"\\]|\\.)*\"|-?[\d.eE+-]+|true|false|null)", text[at:])
    if m:
        end = at + m.end()
    _write(root, rel, (text[:at] + piece + text[end:]).encode())
    return f"{what} in place of a value"


def _bomb(cache: dict, name: str, wbits: int, chunk: bytes, size: int = BOMB_BYTES, head: bytes = b"",
          tail: bytes = b"") -> bytes:
    """``head + chunk * n + tail`` compressed (zlib ``wbits``: GZIP or raw deflate), built once per campaign."""
    if name not in cache:
        c = zlib.compressobj(9, zlib.DEFLATED, wbits)
        cache[name] = (c.compress(head) + b"".join(c.compress(chunk) for _ in range(size // len(chunk)))
                       + c.compress(tail) + c.flush())
    return cache[name]


def _gzip_bomb(cache: dict) -> bytes:
    return _bomb(cache, "gzip", 16 + zlib.MAX_WBITS, b" " * (1 << 20))


def _deflate_bomb(cache: dict) -> bytes:
    return _bomb(cache, "deflate", -zlib.MAX_WBITS, b"\x00" * (1 << 20))


def _gzip_objects(cache: dict) -> bytes:
    # Valid JSON just under the inflate limit whose parse would take twenty times its size.
    from reference_impl.common.bounded import max_inflate

    return _bomb(cache, "objects", 16 + zlib.MAX_WBITS, b"[]," * (1 << 18), max_inflate() - (1 << 20), b"[", b"[]]")


_BOMBS: dict = {}


def _gzip(rng: random.Random, root: str, rel: str, _out: str) -> str:
    if rng.random() < 0.5:
        _write(root, rel, _gzip_objects(_BOMBS))
        return "GZIP of a JSON array of empty arrays, just under the inflate limit"
    _write(root, rel, _gzip_bomb(_BOMBS))
    return f"GZIP bomb ({len(_gzip_bomb(_BOMBS)):,} bytes inflating to {BOMB_BYTES:,})"


def _avro_header(data: bytes) -> tuple[dict[bytes, bytes], bytes, int] | None:
    """(metadata, sync, end of header) of an Avro container, or None if it is not one."""
    try:
        return bounded.read_avro_header(data, what="avro")
    except Exception:  # noqa: BLE001 - not a container we can take apart: the caller leaves it
        return None


def _avro_counts(rng: random.Random, root: str, rel: str, _out: str) -> str:
    """The first block's record count or byte size replaced by a huge or negative number."""
    data = _read(root, rel)
    header = _avro_header(data)
    if header is None:
        return "avro-counts (not a container, unchanged)"
    _meta, _sync, pos = header
    if pos >= len(data):
        return "avro-counts (no block, unchanged)"
    count, after_count = bounded.read_long(data, pos, "avro")
    size, after_size = bounded.read_long(data, after_count, "avro")
    huge = rng.choice((2**40, 2**62, -1, -(2**40)))
    if rng.random() < 0.5:
        out = data[:pos] + bounded.write_long(huge) + data[after_count:]
        what = f"block record count {count} -> {huge}"
    else:
        out = data[:after_count] + bounded.write_long(huge) + data[after_size:]
        what = f"block byte size {size} -> {huge}"
    _write(root, rel, out)
    return what


def _avro_bomb(_rng: random.Random, root: str, rel: str, _out: str) -> str:
    """The same schema and metadata, then one deflate block inflating to far more than allowed."""
    data = _read(root, rel)
    header = _avro_header(data)
    if header is None:
        return "avro-bomb (not a container, unchanged)"
    meta, sync, _pos = header
    meta = dict(meta)
    meta[b"avro.codec"] = b"deflate"
    out = bytearray(b"Obj\x01") + bounded.write_long(len(meta))
    for k, v in meta.items():
        out += bounded.write_long(len(k)) + k + bounded.write_long(len(v)) + v
    bomb = _deflate_bomb(_BOMBS)
    out += bounded.write_long(0) + sync + bounded.write_long(1000) + bounded.write_long(len(bomb)) + bomb + sync
    _write(root, rel, bytes(out))
    return f"deflate bomb block ({len(bomb):,} bytes inflating to {BOMB_BYTES:,})"


def _text_value(rng: random.Random, root: str, rel: str, _out: str) -> str:
    value = rng.choice(["²", "١", "-1", "9" * 5000, " 1 ", "v1.metadata.json", "../../outside/v1.metadata.json",
                        "00001-x.metadata.json", "0x10", "1_0", ""])
    _write(root, rel, value.encode())
    return f"content {value[:40]!r}"


def _symlink_file(_rng: random.Random, root: str, rel: str, outside: str) -> str:
    """The file becomes a link to a copy of itself outside the root: content fine, location not."""
    target = os.path.join(outside, rel)
    os.unlink(os.path.join(root, rel))
    os.symlink(target, os.path.join(root, rel))
    return "link to a copy outside the root"


MUTATIONS: dict[str, tuple[Callable[..., str], tuple[str, ...]]] = {
    # name -> (function, the structures it applies to)
    "flip": (_flip, ("json", "ndjson", "avro", "parquet", "binary", "text")),
    "flip-tail": (_flip_tail, ("avro", "parquet", "binary")),
    "truncate": (_truncate, ("json", "ndjson", "avro", "parquet", "binary", "text")),
    "empty": (_empty, ("json", "ndjson", "avro", "parquet", "binary", "text")),
    "garbage": (_garbage, ("json", "ndjson", "avro", "parquet", "binary", "text")),
    "append": (_append, ("json", "ndjson", "avro", "parquet", "binary")),
    "json-value": (_json_value, ("json", "ndjson")),
    "json-raw": (_json_raw, ("json", "ndjson")),
    "gzip-bomb": (_gzip, ("json", "ndjson")),
    "avro-counts": (_avro_counts, ("avro",)),
    "avro-bomb": (_avro_bomb, ("avro",)),
    "text-value": (_text_value, ("text",)),
    "symlink-file": (_symlink_file, ("json", "ndjson", "avro", "parquet", "binary", "text")),
}
# Structure mutations are drawn more often than byte noise: they reach deeper into the parsers.
WEIGHTS = {"json-value": 4, "json-raw": 2, "avro-counts": 2, "flip": 2}


# --------------------------------------------------------------------------------------------
# Mutants


@dataclass(frozen=True, slots=True)
class Mutant:
    """One mutated copy: where it is, which seed and file, and what was done."""

    format: str
    index: int
    seed_case: str
    kind: str
    target: str  # root-relative file or directory
    mutation: str
    what: str
    root: str  # the mutated table
    outside: str  # the pristine copy beside it, where links and path attacks point


def make_mutant(fmt: str, spec: HostileSpec, seeds: dict[str, tuple[str, str]], index: int, work: str, *,
                seed: int = 0, outside_source: dict[str, str] | None = None) -> Mutant:
    """Mutant ``index`` of format ``fmt``: one seed table restored in place and mutated (scratch under ``work``).

    The outside copy, where links and path attacks point, is the pristine seed unless
    ``outside_source`` names another copy per seed case (``lakeconf fuzz`` marks its data).
    """
    rng = random.Random(f"{seed}:{fmt}:{index}")
    case = rng.choice(sorted(seeds))
    # The table goes back where it was built: formats that record absolute locations in their
    # metadata must find themselves there. The pristine copy is also the outside copy.
    root, pristine = seeds[case]
    outside = os.path.join(work, "outside")
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(outside, ignore_errors=True)
    shutil.copytree(pristine, root, symlinks=True)
    shutil.copytree((outside_source or {}).get(case, pristine), outside, symlinks=True)
    dirs = sorted({os.path.dirname(f) for f in _files(root)} - {""})
    dirs = [d for d in dirs if re.search(spec.directories, d)]
    if dirs and rng.random() < 0.05:
        d = rng.choice(dirs)
        shutil.rmtree(os.path.join(root, d))
        os.symlink(os.path.join(outside, d), os.path.join(root, d))
        return Mutant(fmt, index, case, "directory", d, "symlink-dir", "directory is a link to a copy outside the root",
                      root, outside)
    by_kind: dict[str, list[str]] = {}
    kinds = {}
    for f in _files(root):
        k = spec.kind_of(f)
        if k is not None:
            by_kind.setdefault(k.name, []).append(f)
            kinds[k.name] = k
    # Kind first, then a file of it: a table's many data files must not crowd out its one hint.
    kind = kinds[rng.choice(sorted(by_kind))]
    rel = rng.choice(by_kind[kind.name])
    names = [n for n, (_fn, structures) in MUTATIONS.items() if kind.structure in structures]
    name = rng.choices(names, weights=[WEIGHTS.get(n, 1) for n in names])[0]
    what = MUTATIONS[name][0](rng, root, rel, outside)
    return Mutant(fmt, index, case, kind.name, rel, name, what, root, outside)


def build_seeds(fmt: str, spec: HostileSpec, into: str) -> dict[str, tuple[str, str]]:
    """Each seed case of ``fmt`` built by the reference writer under ``into``: case id -> (table dir, pristine copy)."""
    from conformance.cases.registry import all_cases
    from conformance.engines.reference import ReferenceEngine
    from conformance.model import TableRef

    cases = {c.id: c for c in all_cases() if c.id in spec.seeds}
    missing = sorted(set(spec.seeds) - set(cases))
    if missing:
        raise LookupError(f"hostile seeds of {fmt} name no case: {', '.join(missing)}")
    engine = ReferenceEngine()
    out = {}
    for cid in spec.seeds:
        name = cid.replace("/", "__")
        path, pristine = os.path.join(into, "live", name), os.path.join(into, "pristine", name)
        engine.write(TableRef(format=fmt, uri=path), cases[cid].steps)
        shutil.copytree(path, pristine, symlinks=True)
        out[cid] = (path, pristine)
    return out


# --------------------------------------------------------------------------------------------
# Running mutants in a watched worker


@dataclass(slots=True)
class Outcome:
    """What reading and validating one mutant did."""

    read: str = ""  # ok | invalid_table | unsupported | internal | escaped
    validate: str = ""
    read_message: str = ""
    validate_message: str = ""
    outside: list[str] = field(default_factory=list)  # files or directories opened outside the root
    peak_mb: float = 0.0
    process: str = "ok"  # ok | crash | hang | memory
    seconds: float = 0.0

    @property
    def breaks(self) -> list[str]:
        """Which parts of the promise this mutant broke (empty: none)."""
        out = []
        if self.process != "ok":
            out.append(self.process)
        for op, status, msg in (("read", self.read, self.read_message), ("validate", self.validate, self.validate_message)):
            if status in ("internal", "escaped"):
                out.append(f"{op} {status}: {msg[:300]}")
        if self.outside:
            out.append(f"outside the root: {', '.join(self.outside[:3])}")
        if self.peak_mb > PEAK_MB_LIMIT:
            out.append(f"peak {self.peak_mb:.0f} MB > {PEAK_MB_LIMIT} MB")
        return out

    @property
    def label(self) -> str:
        """A short outcome class for counting: the process failure, else read/validate statuses."""
        if self.process != "ok":
            return self.process
        validate = self.validate
        if validate == "ok":
            validate = "clean" if self.validate_message in ("0", "") else "flagged"
        return f"read {self.read} / validate {validate}"


class Worker:
    """A worker process that reads and validates tables; restarted after a crash, hang or kill."""

    def __init__(self, timeout: float = TIMEOUT_S) -> None:
        self.timeout = timeout
        self.proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        from conformance.isolation import source_path

        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [source_path(), os.environ.get("PYTHONPATH")])))
        self.proc = subprocess.Popen([sys.executable, "-m", "conformance.hostile.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        return self.proc

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, fmt: str, root: str, outside: str, env: Sequence[tuple[str, str]] = ()) -> Outcome:
        """Read and validate the table at ``root`` in the worker (under ``env`` for that request); the watchdog's
        verdict if it dies."""
        proc = self.proc if self.proc is not None and self.proc.poll() is None else self._start()
        started = time.monotonic()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            request = {"format": fmt, "root": root, "outside": outside, "env": dict(env)}
            proc.stdin.write((json.dumps(request) + "\n").encode())
            proc.stdin.flush()
        except BrokenPipeError:
            self.close()
            return Outcome(process="crash", seconds=0.0)
        fd = proc.stdout.fileno()
        peak = 0.0
        while True:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                line = proc.stdout.readline()
                if not line:  # died: a signal, or the interpreter aborted
                    code = proc.wait()
                    self.proc = None
                    return Outcome(process="crash", read_message=f"worker exit {code}", seconds=time.monotonic() - started)
                out = Outcome(**json.loads(line))
                out.seconds = time.monotonic() - started
                return out
            rss = _rss_mb(proc.pid)
            peak = max(peak, rss)
            if rss > KILL_MB:
                self.close()
                return Outcome(process="memory", peak_mb=peak, seconds=time.monotonic() - started)
            if time.monotonic() - started > self.timeout:
                self.close()
                return Outcome(process="hang", peak_mb=peak, seconds=time.monotonic() - started)


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


# --------------------------------------------------------------------------------------------
# A campaign


@dataclass(slots=True)
class Report:
    """A campaign's tallies and its breaks."""

    mutants: int = 0
    by_kind: Counter = field(default_factory=Counter)  # (format, kind, outcome label) -> count
    by_mutation: Counter = field(default_factory=Counter)  # (format, mutation) -> count
    breaks: list[tuple[Mutant, Outcome]] = field(default_factory=list)
    seconds: float = 0.0
    max_peak_mb: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "mutants": self.mutants, "seconds": round(self.seconds, 1), "max_peak_mb": round(self.max_peak_mb),
            "by_kind": [{"format": f, "kind": k, "outcome": o, "count": n} for (f, k, o), n in sorted(self.by_kind.items())],
            "by_mutation": [{"format": f, "mutation": m, "count": n} for (f, m), n in sorted(self.by_mutation.items())],
            "breaks": [{"format": m.format, "seed": m.seed_case, "kind": m.kind, "target": m.target, "mutation": m.mutation,
                        "what": m.what, "breaks": o.breaks} for m, o in self.breaks],
        }


def campaign(formats: Sequence[str], mutants: int, work: str, *, seed: int = 0, keep: str | None = None,
             progress: Callable[[str], None] | None = None) -> Report:
    """``mutants`` mutants of each format in ``formats``, each read and validated in the worker."""
    report = Report()
    started = time.monotonic()
    with Worker() as worker:
        for fmt in formats:
            spec = spec_of(fmt)
            if spec is None:
                raise LookupError(f"format {fmt} declares no hostile-input spec")
            seeds = build_seeds(fmt, spec, os.path.join(work, "seeds", fmt))
            for i in range(mutants):
                m = make_mutant(fmt, spec, seeds, i, os.path.join(work, "mutant"), seed=seed)
                o = worker.run(fmt, m.root, m.outside, spec.env)
                report.mutants += 1
                report.by_kind[(fmt, m.kind, o.label)] += 1
                report.by_mutation[(fmt, m.mutation)] += 1
                report.max_peak_mb = max(report.max_peak_mb, o.peak_mb)
                if o.breaks:
                    report.breaks.append((m, o))
                    if keep:
                        dest = os.path.join(keep, f"{fmt}-{i:06d}")
                        shutil.rmtree(dest, ignore_errors=True)
                        shutil.copytree(m.root, os.path.join(dest, "table"), symlinks=True)
                        with open(os.path.join(dest, "mutant.json"), "w") as fh:
                            json.dump({"mutant": {k: getattr(m, k) for k in m.__slots__}, "breaks": o.breaks}, fh, indent=1)
                if progress and (i + 1) % 200 == 0:
                    progress(f"hostile: {fmt} {i + 1}/{mutants} mutants, {len(report.breaks)} break(s), "
                             f"{time.monotonic() - started:.0f}s")
    report.seconds = time.monotonic() - started
    return report


def mutants_for_profile(profile: str | None = None) -> int:
    """Mutants per format for a hypothesis profile name (dev / ci / thorough); LAKECONF_HOSTILE_MUTANTS overrides."""
    raw = os.environ.get("LAKECONF_HOSTILE_MUTANTS", "")
    if raw.isascii() and raw.isdigit():
        return int(raw)
    return {"dev": 60, "ci": 1000, "thorough": 10000}.get(profile or os.environ.get("HYPOTHESIS_PROFILE", "dev"), 60)


def render(report: Report) -> str:
    """The counts per format, file kind and outcome, then the breaks, as text."""
    lines = [f"hostile input: {report.mutants} mutants in {report.seconds:.0f}s, peak {report.max_peak_mb:.0f} MB, "
             f"{len(report.breaks)} break(s) of the promise"]
    for (f, k, o), n in sorted(report.by_kind.items()):
        lines.append(f"  {f:8} {k:18} {o:50} {n:6}")
    for m, o in report.breaks[:50]:
        lines.append(f"  BREAK {m.format} {m.seed_case} {m.target} [{m.mutation}: {m.what}]: {'; '.join(o.breaks)}")
    return "\n".join(lines)


__all__ = ["FileKind", "HostileSpec", "Mutant", "Outcome", "Report", "Worker", "campaign", "make_mutant", "build_seeds",
           "spec_of", "formats_with_spec", "mutants_for_profile", "render", "MUTATIONS", "PEAK_MB_LIMIT"]
