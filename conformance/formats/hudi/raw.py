"""Raw file surgery for the Hudi case corpus: tables no writer API produces.

A table version from the future, a timeline layout that contradicts the table version, instants left
inflight, a corrupt log block, a deleted base file, an instant of an unknown action, garbage commit
metadata. Each public function returns a *raw step function* ``fn(storage)`` that changes a freshly built
table through its ``Storage``; the corpus wraps it in ``conformance.model.Raw``.

The surgery reads and writes the files directly (``hoodie.properties`` as ``key=value`` lines, timeline
files by name, log files by the block framing's magic) and never through the reference's parsers: a raw
step must be able to produce what the reference refuses, and must not change when the reference does.
"""

from __future__ import annotations

import re
from typing import Any, Callable

RawFn = Callable[[Any], None]
PROPERTIES = ".hoodie/hoodie.properties"
MAGIC = b"#HUDI#"
# A timeline file: <requested>[_<completed>].<action>[.<state>] (layout 1 in .hoodie/, layout 2 in .hoodie/timeline/).
_INSTANT = re.compile(r"^(\d{14,17})(?:_(\d{14,17}))?\.([a-z]+)(?:\.(requested|inflight))?$")


def _properties(storage: Any) -> dict[str, str]:
    out = {}
    for line in storage.read(PROPERTIES).decode("utf-8").splitlines():
        if line and not line.startswith(("#", "!")) and "=" in line:
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def set_properties(**changes: str) -> RawFn:
    """Rewrite ``hoodie.properties`` with keys changed (``_`` in a keyword stands for ``.``)."""

    def fn(storage: Any) -> None:
        props = _properties(storage)
        props.update({k.replace("_", "."): v for k, v in changes.items()})
        text = "#Properties changed by a lakeconf raw step\n" + "".join(f"{k}={v}\n" for k, v in sorted(props.items()))
        storage.write_atomic(PROPERTIES, text.encode("utf-8"))

    return fn


def drop_property(key: str) -> RawFn:
    """Rewrite ``hoodie.properties`` without ``key``."""

    def fn(storage: Any) -> None:
        props = _properties(storage)
        props.pop(key, None)
        text = "#Properties changed by a lakeconf raw step\n" + "".join(f"{k}={v}\n" for k, v in sorted(props.items()))
        storage.write_atomic(PROPERTIES, text.encode("utf-8"))

    return fn


def _instant_files(storage: Any) -> list[tuple[str, re.Match]]:
    out = []
    for directory in (".hoodie", ".hoodie/timeline"):
        for info in storage.list(directory):
            name = info.path.rsplit("/", 1)[-1]
            m = _INSTANT.match(name)
            if m:
                out.append((f"{directory}/{name}", m))
    return sorted(out, key=lambda item: item[1].group(1))


def uncomplete_last() -> RawFn:
    """Delete the completed file of the latest completed data instant, leaving it inflight (a crashed writer)."""

    def fn(storage: Any) -> None:
        done = [(p, m) for p, m in _instant_files(storage) if m.group(4) is None
                and m.group(3) in ("commit", "deltacommit", "replacecommit")]
        storage.delete(done[-1][0])

    return fn


def uncomplete_all() -> RawFn:
    """Delete every completed data instant's file: only requested and inflight instants remain."""

    def fn(storage: Any) -> None:
        for path, m in _instant_files(storage):
            if m.group(4) is None and m.group(3) in ("commit", "deltacommit", "replacecommit"):
                storage.delete(path)

    return fn


def add_completed_instant(action: str, content: bytes = b"{}") -> RawFn:
    """Add a completed instant of ``action`` one millisecond after the latest instant (any action name)."""

    def fn(storage: Any) -> None:
        files = _instant_files(storage)
        last = max(int(m.group(2) or m.group(1)) for _, m in files)
        requested, completed = str(last + 1), str(last + 2)
        if storage.exists(".hoodie/timeline") or any(p.startswith(".hoodie/timeline/") for p, _ in files):
            storage.put_if_absent(f".hoodie/timeline/{requested}_{completed}.{action}", content)
        else:
            storage.put_if_absent(f".hoodie/{requested}.{action}", content)

    return fn


def garble_last_commit() -> RawFn:
    """Overwrite the latest completed data instant's metadata with bytes that are neither JSON nor Avro."""

    def fn(storage: Any) -> None:
        done = [(p, m) for p, m in _instant_files(storage) if m.group(4) is None
                and m.group(3) in ("commit", "deltacommit", "replacecommit")]
        storage.write_atomic(done[-1][0], b"\x00garbage, not commit metadata\xff")

    return fn


def _data_files(storage: Any, suffix: str) -> list[str]:
    return sorted(f.path for f in storage.walk("") if not f.path.startswith(".hoodie/")
                  and (f.path.endswith(suffix) if suffix == ".parquet" else re.search(r"\.log\.\d+_", f.path)))


def delete_a_base_file() -> RawFn:
    """Delete the first base file (by path) that the table lists."""

    def fn(storage: Any) -> None:
        storage.delete(_data_files(storage, ".parquet")[0])

    return fn


def corrupt_last_log_block() -> RawFn:
    """Overwrite the middle of the last block of the newest log file (by name) with 0xFF bytes: its lengths no
    longer frame it, so a reader must skip it as a corrupt block (its magic and length prefix stay)."""

    def fn(storage: Any) -> None:
        logs = _data_files(storage, ".log")
        path = logs[-1]
        data = bytearray(storage.read(path))
        start = data.rfind(MAGIC)
        body = start + len(MAGIC) + 8
        end = len(data)
        middle = (body + end) // 2
        data[middle:end - 4] = b"\xff" * (end - 4 - middle)
        storage.write_atomic(path, bytes(data))

    return fn
