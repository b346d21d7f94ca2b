"""Keep credentials out of every message the kit prints or stores (results, reports, errors)."""

from __future__ import annotations

import os
import re

_SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "MINIO_ROOT_PASSWORD", "MINIO_ROOT_USER")
_registered: set[str] = set()
# key=value / "key": "value" spellings of secret-looking option names, whatever the value is
_PATTERN = re.compile(
    r"(?i)((?:aws_secret_access_key|aws_access_key_id|aws_session_token|secret_access_key|access_key_id"
    r"|session_token|password|secret|key_id)[\"']?\s*[:=]\s*[\"']?)([^\s\"',}]+)"
)


def register_secret(value: str | None) -> None:
    """Remember a secret value so ``redact`` hides it wherever it appears."""
    if value and len(value) >= 4:
        _registered.add(value)


def redact(text: str) -> str:
    """``text`` with known secret values and secret-looking ``key=value`` pairs masked."""
    secrets = set(_registered)
    for name in _SECRET_ENV:
        value = os.environ.get(name)
        if value and len(value) >= 4:
            secrets.add(value)
    for value in sorted(secrets, key=len, reverse=True):
        text = text.replace(value, "***")
    return _PATTERN.sub(lambda m: m.group(1) + "***", text)
