"""One error root with three kinds: invalid table, unsupported feature, internal bug.

Every error the reference raises on purpose is a ``LakeconfError``; callers branch on ``kind``
(or the subclass), tests assert the kind and a stable fragment of the message. Context (the
path being read, the version, the rule id) travels with the error so that a message can say
where and what to do next without a traceback.
"""

from __future__ import annotations

from typing import Any


class LakeconfError(Exception):
    """Root of every deliberate error of the kit."""

    kind = "error"

    def __init__(
        self,
        message: str,
        *,
        rule: str | None = None,
        path: str | None = None,
        version: int | None = None,
        hint: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule
        self.path = path
        self.version = version
        self.hint = hint
        self.context = context

    def __str__(self) -> str:
        parts = [self.message]
        where = []
        if self.path is not None:
            where.append(f"at {self.path}")
        if self.version is not None:
            where.append(f"version {self.version}")
        if where:
            parts.append(f"({', '.join(where)})")
        if self.rule:
            parts.append(f"[{self.rule}]")
        text = " ".join(parts)
        if self.hint:
            text += f". {self.hint}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view for reports and ``--json`` output."""
        out: dict[str, Any] = {"kind": self.kind, "message": self.message}
        for key in ("rule", "path", "version", "hint"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


class InvalidTable(LakeconfError):
    """The table (or the input) breaks the spec: nothing the reader can do is correct."""

    kind = "invalid_table"


class Unsupported(LakeconfError):
    """A valid table uses a feature this implementation does not implement."""

    kind = "unsupported"

    def __init__(self, message: str, *, feature: str | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.feature = feature


class Internal(LakeconfError):
    """A bug in the kit itself: the input was fine but we failed."""

    kind = "internal"


class CommitConflict(LakeconfError):
    """A concurrent writer won the race for a version; retryable, not a table error."""

    kind = "conflict"


KINDS = ("invalid_table", "unsupported", "internal")
