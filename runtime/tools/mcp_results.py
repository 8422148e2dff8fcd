"""An MCP tool result as our tool envelope: its text and structured content, its pictures
for the model to see (as image blocks beside the envelope), an `isError` result as an error
the model can read."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from runtime.tools.envelope import ToolImage, ToolResult

if TYPE_CHECKING:
    import mcp_types as types

SUMMARY_CHARS = 4000

# The pictures the model takes in a tool result, and the largest one it takes.
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_IMAGE_BYTES = 5 * 1024 * 1024


def _picture(block: types.ImageContent) -> ToolImage | None:
    """An image block the model can see, or None (another type, too large, not base64)."""
    if block.mime_type not in IMAGE_TYPES:
        return None
    try:
        data = base64.b64decode(block.data, validate=True)
    except ValueError:
        return None
    return (
        ToolImage(media_type=block.mime_type, data=data) if len(data) <= MAX_IMAGE_BYTES else None
    )


def _read(content: Iterable[Any]) -> tuple[str, list[ToolImage]]:
    """A result's text, each picture named in it, and the pictures the model is shown."""
    import mcp_types as types

    parts: list[str] = []
    images: list[ToolImage] = []
    for block in content:
        match block:
            case types.TextContent(text=text):
                parts.append(text)
            case types.ImageContent(mime_type=mime) as image:
                picture = _picture(image)
                if picture is None:
                    parts.append(f"[an image, {mime}, that could not be shown]")
                else:
                    images.append(picture)
                    parts.append(f"[image {len(images)}, {mime}: shown after this result]")
            case _:
                parts.append(f"[{getattr(block, 'type', 'content')}]")
    return "\n".join(parts), images


def _without_bytes(block: Any) -> dict[str, Any]:
    """A content block as data for the envelope, its base64 bytes left out (an image's are
    shown as an image; the model cannot read them as text)."""
    dumped: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    if "data" in dumped:
        encoded = str(dumped["data"])
        dumped["data"] = f"<{len(encoded) * 3 // 4 - encoded[-2:].count('=')} bytes>"
    return dumped


def envelope(result: types.CallToolResult) -> ToolResult:
    """An MCP tool result in our tool envelope: its text (and structured content) on
    success, with its pictures for the model to see; an `isError` result as an error the
    model can read."""
    text, images = _read(result.content)
    if result.is_error:
        return ToolResult.failure("tool_error", text[:SUMMARY_CHARS] or "the tool failed")
    data = result.structured_content
    if data is None:
        data = [_without_bytes(block) for block in result.content]
    outcome = ToolResult.success(text[:SUMMARY_CHARS] or "done", data)
    outcome.images = images
    return outcome
