"""The hostile-input worker: reads and validates one table per request line, and reports how.

Protocol: one JSON request per line on stdin (``{"format", "root", "outside"}``), one JSON answer
per line on the original stdout (the fields of ``conformance.hostile.Outcome``). Anything a
library prints goes to stderr instead, so it cannot corrupt the answers.

Outside reads are caught with an audit hook: every ``open``, ``os.listdir`` and ``os.scandir``
whose path resolves into the request's ``outside`` directory is recorded. Peak memory is the
process's VmHWM, reset before each request (``/proc/self/clear_refs``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

_outside: list[str] = []  # the current request's outside directory (resolved), if any
_touched: list[str] = []


def _audit(event: str, args: tuple) -> None:
    if not _outside or event not in ("open", "os.listdir", "os.scandir"):
        return
    path = args[0] if args else None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return
    real = os.path.realpath(path)
    if real == _outside[0] or real.startswith(_outside[0] + os.sep):
        _touched.append(real[len(_outside[0]) + 1:] or "/")


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def _status(exc: BaseException) -> tuple[str, str]:
    from reference_impl.errors import KINDS, LakeconfError

    message = " ".join(f"{type(exc).__name__}: {exc}".split())[:2000]
    if isinstance(exc, LakeconfError) and exc.kind in KINDS:
        return exc.kind, message
    return "escaped", message


def handle(request: dict[str, Any]) -> dict[str, Any]:
    from conformance.bench import maxrss_mb
    from reference_impl import formats
    from reference_impl.storage import open_storage

    fmt = formats.get(request["format"])
    out: dict[str, Any] = {}
    _reset_peak()
    _touched.clear()
    _outside[:] = [os.path.realpath(request["outside"])] if request.get("outside") else []
    env = request.get("env") or {}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        for op, which in (("read", "reader"), ("validate", "validator")):
            try:
                fn = fmt.load(which)
                result = fn(open_storage(request["root"]))
                out[op] = "ok"
                out[f"{op}_message"] = f"{getattr(result, 'num_rows', len(result) if hasattr(result, '__len__') else '')}"
            except Exception as exc:  # noqa: BLE001 - classified, never raised: the worker serves the next mutant
                out[op], out[f"{op}_message"] = _status(exc)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    _outside.clear()
    out["outside"] = sorted(set(_touched))[:20]
    out["peak_mb"] = maxrss_mb()  # VmHWM: this process only, since the reset above
    return out


def main() -> int:
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # libraries' prints must not reach the protocol
    sys.addaudithook(_audit)
    for line in sys.stdin:
        if not line.strip():
            continue
        answers.write(json.dumps(handle(json.loads(line))) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
