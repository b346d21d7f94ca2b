"""lakeconf findings export: a folder a maintainer can run without the kit, for a real engine bug."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conformance.engines.registry import load_engines
from conformance.findings import finding
from conformance.findings.export import export
from conformance.runner import load_cases


@pytest.mark.rule("DELTA-PART-001")
def test_exported_folder_reproduces_the_divergence_with_the_engine_alone(tmp_path):
    engines = {e.name: e for e in load_engines(["deltalake-datafusion"]) if e.available() is None}
    if not engines:
        pytest.skip("deltalake is not installed")
    f = finding("datafusion-empty-string-partition-not-null")
    done = export([f, finding("pyiceberg-writes-null-nested-collection-as-empty")], str(tmp_path), engines,
                  load_cases("delta"), say=lambda _: None)
    assert done[1].folder is None and "writer side" in done[1].note  # writer-side causes are not exported
    folder = tmp_path / f.id
    assert {"README.md", "reproduce.py", "finding.json", "table"} <= {p.name for p in folder.iterdir()}
    readme = (folder / "README.md").read_text()
    assert "DELTA-PART-001" in readme and "Partition Value Serialization" in readme
    script = (folder / "reproduce.py").read_text()
    assert "conformance" not in script and "reference_impl" not in script  # the engine's public API only
    proc = subprocess.run([sys.executable, "reproduce.py"], cwd=folder, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "DIVERGES" in proc.stdout and "returned, not expected: [('id', 2), ('p', '')]" in proc.stdout
