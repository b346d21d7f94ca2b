"""A complete command-contract engine (``conformance/engines/VENDORS.md``), for a vendor to copy.

It reads tables with the kit's own reference readers, which is not what a vendor would plug in,
but it speaks the whole contract: ``version``, ``capabilities``, and ``read`` with the exit codes
(0 rows written, 3 unsupported and 4 invalid table with the reason on stderr's first line, anything
else an error: no verdict on the table).
Run it as a command engine::

    lakeconf run --engines reference,example --engine-cmd 'example=python -m conformance.engines.command_example'
"""

from __future__ import annotations

import argparse
import json
import sys

EXIT_UNSUPPORTED = 3
EXIT_INVALID_TABLE = 4
EXITS = {"unsupported": EXIT_UNSUPPORTED, "invalid_table": EXIT_INVALID_TABLE}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["version"]:
        print("command-example 1.0")
        return 0
    if argv[:1] == ["capabilities"]:
        from reference_impl import formats

        # A flat map of gaps applies to every format the command reads.
        gaps = {"timestamp-travel": "this example reads versions only", "ref-travel": "this example reads versions only"}
        print(json.dumps({"read": [f.name for f in formats.all_formats()], "unsupported": gaps}))
        return 0
    parser = argparse.ArgumentParser(prog="command_example read")
    parser.add_argument("command", choices=["read"])
    parser.add_argument("--format", required=True)
    parser.add_argument("--uri", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--version", type=int)
    parser.add_argument("--timestamp")
    parser.add_argument("--ref")
    args = parser.parse_args(argv)
    if args.timestamp or args.ref:
        print("this example reads versions only", file=sys.stderr)
        return EXIT_UNSUPPORTED
    import pyarrow.parquet as pq

    from reference_impl import formats
    from reference_impl.storage import S3Config, open_storage

    try:
        read_table = formats.get(args.format).load("reader")
        # Object-store credentials arrive in the environment (AWS_*), never on the command line.
        s3 = S3Config.from_env() if args.uri.startswith(("s3://", "s3a://")) else None
        storage = open_storage(args.uri, s3=s3) if s3 is not None else open_storage(args.uri)
        table = read_table(storage, version=args.version)
    except Exception as exc:  # noqa: BLE001 - the contract: a reason on stderr and an exit code
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return EXITS.get(getattr(exc, "kind", None), 1)
    pq.write_table(table, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
