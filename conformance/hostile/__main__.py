"""``python -m conformance.hostile``: a hostile-input campaign with counts per file kind and outcome.

    python -m conformance.hostile [--formats F1,F2] [--mutants N] [--seed S] [--keep DIR] [--json FILE]
    python -m conformance.hostile --replay DIR/<format>-<n>   (a kept mutant, with tracebacks)

``--mutants`` defaults to the hypothesis profile's size (dev 60, ci 1,000, thorough 10,000 per
format). Exit 1 when a mutant broke the promise (its copy is kept under ``--keep``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile

from conformance.hostile import campaign, formats_with_spec, mutants_for_profile, render


def replay(kept: str) -> int:
    """Put a kept mutant back where it was made (its metadata may hold absolute locations), then
    read and validate it here, so that a break shows its traceback."""
    import os
    import shutil
    import traceback

    from reference_impl import formats
    from reference_impl.storage import open_storage

    with open(os.path.join(kept, "mutant.json")) as fh:
        mutant = json.load(fh)["mutant"]
    root = mutant["root"]
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(os.path.join(kept, "table"), root, symlinks=True)
    print(f"replaying {mutant['format']} mutant {mutant['index']} ({mutant['mutation']}: {mutant['what']}) at {root}")
    for which in ("reader", "validator"):
        try:
            result = formats.get(mutant["format"]).load(which)(open_storage(root))
            print(f"{which}: ok ({getattr(result, 'num_rows', None) if which == 'reader' else len(result)})")
        except Exception:  # noqa: BLE001 - shown in full: this is the debugging path
            print(f"{which}:")
            traceback.print_exc(file=sys.stdout)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m conformance.hostile")
    p.add_argument("--formats", default=",".join(formats_with_spec()))
    p.add_argument("--mutants", type=int, default=None, help="per format (default: by HYPOTHESIS_PROFILE)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", default=None, help="copy each breaking mutant here")
    p.add_argument("--json", default=None, help="write the counts and breaks as JSON")
    p.add_argument("--replay", default=None, help="read and validate one kept mutant in this process")
    args = p.parse_args(argv)
    if args.replay:
        return replay(args.replay)
    n = args.mutants if args.mutants is not None else mutants_for_profile()
    with tempfile.TemporaryDirectory(prefix="lakeconf-hostile-") as work:
        report = campaign([f for f in args.formats.split(",") if f], n, work, seed=args.seed, keep=args.keep,
                          progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(render(report))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report.to_dict(), fh, indent=1)
    return 1 if report.breaks else 0


if __name__ == "__main__":
    sys.exit(main())
