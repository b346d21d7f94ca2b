"""Concurrent committers racing on the same version keys: no commit lost, duplicated or torn.

8 threads each try to create the same 50 keys in order (as writers racing for versions 0..49 of
one log do). For every key exactly one thread must win; the stored bytes must be exactly that
winner's payload (large enough that a torn or interleaved write would show); nothing else may
appear under the prefix.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid

import pytest

from reference_impl.errors import CommitConflict
from reference_impl.storage import LocalStorage, S3Storage, Storage

THREADS = 8
VERSIONS = 50
PAYLOAD_BYTES = 64 * 1024


def _key(version: int) -> str:
    return f"_delta_log/{version:020d}.json"


def _payload(thread: int, version: int) -> bytes:
    # Deterministic per (thread, version) and different everywhere: the bytes name their writer.
    head = f"thread={thread} version={version}\n".encode()
    block = hashlib.sha256(head).digest()
    return head + block * ((PAYLOAD_BYTES - len(head)) // len(block))


def _race(storage: Storage) -> None:
    barrier = threading.Barrier(THREADS)
    wins: dict[int, list[int]] = {v: [] for v in range(VERSIONS)}
    errors: list[BaseException] = []
    lock = threading.Lock()

    def committer(thread: int) -> None:
        try:
            barrier.wait()
            for version in range(VERSIONS):
                try:
                    storage.put_if_absent(_key(version), _payload(thread, version))
                except CommitConflict:
                    continue
                with lock:
                    wins[version].append(thread)
        except BaseException as exc:  # surfaced below; a thread must not die silently
            errors.append(exc)

    threads = [threading.Thread(target=committer, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, f"committer raised: {errors[0]!r}"
    assert all(not t.is_alive() for t in threads), "a committer hung"

    lost = [v for v, w in wins.items() if not w]
    duplicated = {v: w for v, w in wins.items() if len(w) > 1}
    assert not lost, f"versions with no winner: {lost}"
    assert not duplicated, f"versions won twice: {duplicated}"
    for version, (winner,) in wins.items():
        data = storage.read(_key(version))
        assert data == _payload(winner, version), f"version {version} is not thread {winner}'s bytes (torn or lost)"
    listed = [f.path for f in storage.list("_delta_log")]
    assert listed == [_key(v) for v in range(VERSIONS)], "stray or missing objects after the race"


@pytest.mark.rule("DELTA-LOG-011", "DELTA-LOG-006")
def test_race_on_local_disk(tmp_path):
    _race(LocalStorage(str(tmp_path / "table")))
    leftovers = [n for n in os.listdir(tmp_path / "table" / "_delta_log") if n.startswith(".tmp-")]
    assert leftovers == []  # losers clean their temp files


@pytest.mark.rule("DELTA-LOG-011", "DELTA-LOG-006")
def test_race_on_minio(minio):
    _race(S3Storage(f"s3://{minio.bucket}/race-{uuid.uuid4().hex[:8]}", minio.s3_config))
