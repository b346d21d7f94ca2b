"""Engines' exceptions as the kit's kinds: what the engines were measured to say, and what is never
a refusal of the table whatever words it carries."""

from __future__ import annotations

import pytest

from conformance.engines.errors import ErrorPatterns, EngineError, kind_of, refusals, translate
from conformance.formats.delta.errors import KERNEL
from conformance.formats.iceberg.errors import DUCKDB_ICEBERG, ICEBERG_RUST, PYICEBERG
from reference_impl.errors import Internal, InvalidTable, LakeconfError, Unsupported


class DeltaError(Exception):
    """Stands for deltalake's exception class of that name (the class name is part of the words)."""


class IOException(Exception):
    """Stands for duckdb.IOException."""


class ValidationError(Exception):
    """Stands for pydantic's ValidationError."""


MEASURED = [
    (KERNEL, DeltaError("Kernel error: No table metadata or protocol found in delta log."), "invalid_table"),
    (KERNEL, DeltaError("Kernel error: Invalid Checkpoint: Had a _last_checkpoint hint but didn't find any checkpoints"), "invalid_table"),
    (KERNEL, DeltaError("Kernel error: Json error: Truncated record whilst reading string"), "invalid_table"),
    (KERNEL, DeltaError("Kernel error: Unsupported: Unsupported minimum reader version 4"), "unsupported"),
    (KERNEL, DeltaError("External error: Kernel error: Internal error Unsupported deletion vector format option: x. "
                        "This is a kernel bug, please report."), "internal"),
    (KERNEL, IOException("IO Error: DeltaKernel InvalidProtocolError (21): Invalid protocol action in the delta log"), "invalid_table"),
    (KERNEL, IOException("IO Error: DeltaKernel UnsupportedError (35): Unsupported: Feature 'x' is not supported"), "unsupported"),
    (KERNEL, NotImplementedError("Unsupported Delta Lake column mapping mode: 'bogus'"), "unsupported"),
    (KERNEL, FileNotFoundError("Object at location t/part-0.parquet not found"), "invalid_table"),
    (PYICEBERG, ValidationError("current-schema-id 99 can't be found in the schemas"), "invalid_table"),
    (PYICEBERG, FileNotFoundError("[Errno 2] Path does not exist 'b/t/metadata/snap-1.avro'"), "invalid_table"),
    (ICEBERG_RUST, RuntimeError("Failed to load static table: DataInvalid => No schema exists with the current schema id 99."),
     "invalid_table"),
    (ICEBERG_RUST, Exception("DataFusion error: External error: Unexpected => Failure in doing io operation, source: "
                             "NotFound (persistent) at read"), "invalid_table"),
    (DUCKDB_ICEBERG, Exception("NotImplementedException: Not implemented Error: Unrecognized transform ('x')"), "unsupported"),
]


@pytest.mark.parametrize("patterns,exc,kind", MEASURED, ids=[f"{type(e).__name__}-{k}-{i}" for i, (_, e, k) in enumerate(MEASURED)])
def test_measured_refusals_get_their_kind(patterns, exc, kind):
    err = translate(exc, patterns)
    assert err.kind == kind
    assert type(exc).__name__ in str(err) and str(exc)[:30] in str(err)  # the engine's words are kept


NO_VERDICT = [
    ModuleNotFoundError("No module named 'myengine_core'"),
    ConnectionRefusedError("[Errno 111] Connection refused"),
    TimeoutError("the read timed out"),
    MemoryError(),
    IOException("HTTP Error: HTTP GET error reading 'http://127.0.0.1/b/t/../x.parquet' (HTTP 403 Forbidden) SignatureDoesNotMatch"),
    Exception("DaftCoreException: Unhandled Error for path: s3://b/t/../x.parquet (XMinioInvalidResourceName)"),
]


@pytest.mark.parametrize("exc", NO_VERDICT, ids=[type(e).__name__ for e in NO_VERDICT])
def test_failures_that_judge_nothing_stay_errors_whatever_the_patterns(exc):
    greedy = ErrorPatterns(invalid=("e", "H", "M", "k", "T"), invalid_on_read=("e",))
    assert kind_of(exc, greedy) == "error"
    assert isinstance(translate(exc, greedy), EngineError)


def test_words_no_pattern_knows_are_no_verdict():
    assert kind_of(RuntimeError("kaboom"), KERNEL) == "error"
    assert kind_of(TypeError("failed to extract field Extract.column_mapping"), PYICEBERG) == "error"


def test_invalid_on_read_only_when_reading():
    patterns = ErrorPatterns(invalid_on_read=("ValidationException",))
    assert kind_of(Exception("ValidationException: cannot commit"), patterns, reading=False) == "error"
    assert kind_of(Exception("ValidationException: cannot commit"), patterns, reading=True) == "invalid_table"


def test_kit_errors_pass_through_and_panics_are_not_caught():
    for err in (InvalidTable("x"), Unsupported("y"), Internal("z"), LakeconfError("w")):
        assert translate(err, KERNEL) is err

    class PanicException(BaseException):
        pass

    with pytest.raises(PanicException):
        with refusals(KERNEL):
            raise PanicException("rust panicked")
    with pytest.raises(InvalidTable, match="Path does not exist"):
        with refusals(ErrorPatterns(), "t"):
            raise FileNotFoundError("Path does not exist 't/x'")
