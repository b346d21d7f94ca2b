"""Vendor engines: the ``lakeconf.engines`` entry point group and the command-line contract."""

from __future__ import annotations

import sys
import textwrap

import pyarrow as pa
import pytest

from conformance.compare import compare
from conformance.engines import registry
from conformance.engines.base import Capabilities, Engine
from conformance.engines.registry import CommandEngine, EngineConfigError, load_engines, parse_command_specs
from conformance.model import TableRef
from reference_impl.errors import InvalidTable, LakeconfError, Unsupported

VENDOR = textwrap.dedent(
    """
    import json, os, sys
    args = sys.argv[1:]
    if args[0] == "version":
        print("vendor 7.1"); sys.exit(0)
    if args[0] == "capabilities":
        print(json.dumps({"read": ["delta"], "unsupported": {"deletionVectors": "not in 7.1"}})); sys.exit(0)
    import pyarrow as pa, pyarrow.parquet as pq
    opts = dict(zip(args[1::2], args[2::2]))
    uri = opts["--uri"]
    if "unsupported" in uri:
        print("needs feature X", file=sys.stderr); sys.exit(3)
    if "crash" in uri:
        print("segfault-ish", file=sys.stderr); sys.exit(139)
    if "broken" in uri:
        print("the log has a gap at version 2", file=sys.stderr); sys.exit(4)
    t = pa.table({"uri_len": [len(uri)], "version": [int(opts.get("--version", -1))], "ref": pa.array([opts.get("--ref")], pa.string())})
    if "ipc" in uri:
        with pa.OSFile(opts["--out"], "wb") as f, pa.ipc.new_file(f, t.schema) as w:
            w.write_table(t)
    else:
        pq.write_table(t, opts["--out"])
    """
)


@pytest.fixture
def vendor(tmp_path):
    script = tmp_path / "vendor.py"
    script.write_text(VENDOR)
    return CommandEngine("vendor", f"{sys.executable} {script}")


def test_command_engine_contract(vendor):
    assert vendor.available() is None
    assert vendor.version() == "vendor 7.1"
    caps = vendor.capabilities()
    assert caps.read == frozenset({"delta"}) and caps.missing_read_features("delta", ["deletionVectors"]) == ["deletionVectors"]
    # a flat "unsupported" map applies to every format the command reads
    assert caps.reason("delta", "deletionVectors") == "not in 7.1"
    got = vendor.read(TableRef(format="delta", uri="/t/parquet"), at=3)
    assert compare(got, pa.table({"uri_len": [len("/t/parquet")], "version": [3], "ref": pa.array([None], pa.string())})).equal
    got = vendor.read(TableRef(format="delta", uri="/t/ipc"))
    assert got.column("version").to_pylist() == [-1]
    # a branch or tag reaches the command as --ref
    assert vendor.read(TableRef(format="delta", uri="/t/parquet"), ref="dev").column("ref").to_pylist() == ["dev"]


def test_command_capabilities_per_format():
    from conformance.engines.registry import _gaps_by_format

    per_format = {"delta": {"deletionVectors": "later"}, "iceberg": {"equality-deletes": "never"}}
    assert _gaps_by_format(per_format, frozenset({"delta", "iceberg"})) == per_format
    assert _gaps_by_format({"x": "why"}, frozenset({"delta", "iceberg"})) == {"delta": {"x": "why"}, "iceberg": {"x": "why"}}
    assert _gaps_by_format({}, frozenset({"delta"})) == {}


def test_command_engine_exit_codes(vendor):
    with pytest.raises(Unsupported, match="needs feature X"):
        vendor.read(TableRef(format="delta", uri="/t/unsupported"))
    with pytest.raises(InvalidTable, match="the log has a gap at version 2"):
        vendor.read(TableRef(format="delta", uri="/t/broken"))
    with pytest.raises(LakeconfError, match="exited 139: segfault-ish") as crashed:
        vendor.read(TableRef(format="delta", uri="/t/crash"))
    assert crashed.value.kind == "error"  # any other exit is no verdict on the table


def test_credentials_go_through_the_environment_only(vendor, monkeypatch):
    seen = {}
    real = vendor._run

    def spy(args, env=None, timeout=60):
        seen["args"], seen["env"] = args, env
        return real(args, env=env, timeout=timeout)

    monkeypatch.setattr(vendor, "_run", spy)
    vendor.read(TableRef(format="delta", uri="s3://b/t", storage_options={"AWS_SECRET_ACCESS_KEY": "s3cr3t"}))
    assert "s3cr3t" not in " ".join(seen["args"])
    assert seen["env"]["AWS_SECRET_ACCESS_KEY"] == "s3cr3t"


def test_missing_command_is_unavailable():
    assert "command not found" in CommandEngine("x", "/no/such/binary --flag").available()


def test_command_specs(monkeypatch):
    monkeypatch.setenv("LAKECONF_ENGINE_CMDS", "a=run-a --x; b=run-b")
    assert parse_command_specs(["c=run-c"]) == {"a": "run-a --x", "b": "run-b", "c": "run-c"}
    with pytest.raises(EngineConfigError, match="NAME=COMMAND"):
        parse_command_specs(["nope"])
    names = [e.name for e in load_engines(["a", "c"], commands=["c=run-c"])]
    assert names == ["a", "c"]


class VendorEngine(Engine):
    name = "placeholder"

    def version(self):
        return "v"

    def capabilities(self):
        return Capabilities(read=frozenset({"delta"}))

    def read(self, table, **kw):
        return pa.table({"x": [1]})


class _EP:
    def __init__(self, name, obj):
        self.name, self.value, self._obj = name, f"vendor_pkg:{name}", obj

    def load(self):
        return self._obj


def test_entry_point_engines(monkeypatch):
    eps = [_EP("acme", VendorEngine), _EP("acme2", lambda: VendorEngine()), _EP("bad", lambda: 42)]
    monkeypatch.setattr(registry._metadata, "entry_points", lambda group: eps if group == "lakeconf.engines" else [])
    acme, acme2 = load_engines(["acme", "acme2"])
    assert acme.name == "acme" and acme2.name == "acme2" and acme.roles() == ["reader"]
    with pytest.raises(EngineConfigError, match="not a conformance Engine"):
        load_engines(["bad"])


def test_the_example_command_engine_speaks_the_contract(tmp_path):
    """conformance.engines.command_example, the command VENDORS.md offers to copy, against real tables."""
    import pyarrow as pa

    from conformance.engines.reference import ReferenceEngine
    from conformance.model import Append, Create

    example = CommandEngine("example", f"{sys.executable} -m conformance.engines.command_example")
    assert example.available() is None and example.version() == "command-example 1.0"
    caps = example.capabilities()
    assert {"delta", "iceberg"} <= caps.read and caps.missing_read_features("delta", ["timestamp-travel"])
    schema = pa.schema([("id", pa.int64())])
    for fmt in ("delta", "iceberg"):
        table = TableRef(format=fmt, uri=str(tmp_path / fmt))
        ReferenceEngine().write(table, [Create(schema=schema), Append(rows=pa.table({"id": [1, 2]}, schema=schema))])
        assert example.read(table).column("id").to_pylist() == [1, 2]
        assert example.read(table, at=0).num_rows == 0
        with pytest.raises(Unsupported, match="versions only"):
            example.read(table, timestamp="2026-01-01T00:00:00Z")
    with pytest.raises(InvalidTable, match="no Delta log"):  # exit 4: the command refused the table
        example.read(TableRef(format="delta", uri=str(tmp_path / "missing")))
