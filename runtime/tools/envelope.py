"""What every tool returns (DESIGN §2, Tools)."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class ToolStatus(StrEnum):
    SUCCESS = "success"
    ERROR = "error"
    CANCELLED = "cancelled"


class ToolErrorInfo(BaseModel):
    kind: str
    message: str
    retryable: bool = False


class ToolImage(BaseModel):
    """A picture a tool returned, for the model to see (not part of the JSON envelope)."""

    media_type: str
    data: bytes


class ToolResult(BaseModel):
    status: ToolStatus
    summary_text: str
    result: Any = None
    error: ToolErrorInfo | None = None
    # Shown to the model as image blocks beside the envelope; stored as files with the
    # transcript row, never in the envelope's JSON.
    images: list[ToolImage] = Field(default_factory=list, exclude=True)
    # The turn ends after this round instead of asking the model again (schedule_wakeup).
    ends_turn: bool = Field(default=False, exclude=True)

    @classmethod
    def success(cls, summary: str, result: Any = None) -> ToolResult:
        return cls(status=ToolStatus.SUCCESS, summary_text=summary, result=result)

    @classmethod
    def failure(cls, kind: str, message: str, *, retryable: bool = False) -> ToolResult:
        return cls(
            status=ToolStatus.ERROR,
            summary_text=message,
            error=ToolErrorInfo(kind=kind, message=message, retryable=retryable),
        )

    @classmethod
    def cancelled(cls, why: str) -> ToolResult:
        return cls(
            status=ToolStatus.CANCELLED,
            summary_text=why,
            error=ToolErrorInfo(kind="cancelled", message=why),
        )

    def for_model(self) -> str:
        """The tool_result content the model sees: the whole envelope as JSON."""
        return json.dumps(self.model_dump(exclude_none=True), ensure_ascii=False, default=str)
