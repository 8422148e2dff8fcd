"""The neutral transcript lowered to the Messages API's parameters, the same for Anthropic's
API, Bedrock and Vertex (their SDK clients move the model into the URL and add the body's
`anthropic_version`).

The invariant check comes before anything is sent. The request's stable prefix is marked for
prompt caching: the last tool, the system prompt, the summary of the compacted past, and the
last block of the last message, so the next round (or turn) reads all of it from the cache;
that is four breakpoints, the API's maximum. Tool-call ids are the transcript's: each is sent
in Anthropic's shape (`tool_ids.lowered`), a tool_use and the tool_result answering it alike,
so a turn begun on another provider goes on here.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from typing import Any

from runtime.errors import TranscriptInvariantError
from runtime.prompts import render_summary
from runtime.providers import tool_ids
from runtime.providers.base import ProviderRequest
from runtime.providers.history import SameIds
from runtime.providers.lowered_history import (
    KEY,
    Lowered,
    kept_for,
    lowered_messages,
    missing_files,
)
from runtime.tools.base import ToolSpec
from runtime.transcript import (
    AttachmentBlock,
    AttachmentForm,
    Block,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMessage,
    check_invariants,
    normalize,
)

log = logging.getLogger(__name__)


def _cached(block: dict[str, Any]) -> dict[str, Any]:
    """`block` as a cache breakpoint: the prefix up to and including it is cached."""
    return {**block, "cache_control": {"type": "ephemeral"}}


def lower_request(request: ProviderRequest) -> dict[str, Any]:
    """SDK params for `request`; raises TranscriptInvariantError instead of sending a bad one.
    With the session's `History`, only the messages its new rows changed are lowered."""
    summary = (request.summary or "").strip()
    history = request.history
    kept = kept_for(history, summary)
    rows = list(request.messages)
    if summary:  # first, as a user message: normalize merges it with a user row after it
        opening = kept.rows[0] if kept and kept.rows else None
        rows.insert(0, opening or TranscriptMessage(role="user", blocks=[_opening(summary)]))
    if history is not None:
        history.kept.pop(KEY, None)  # put back once it holds this request
        lowering = _Lowering(request.files, SameIds())

        def lower(index: int, message: TranscriptMessage) -> dict[str, Any]:
            lowered = lowering.message(message)
            if summary and index == 0:
                lowered["content"][0] = _cached(lowered["content"][0])
            return lowered

        missing = missing_files(request.files)
        done = lowered_messages(rows, summary, kept or Lowered(summary), lower, missing)
        if done is not None:
            history.kept[KEY] = done
            return _params(request, done.lowered)
    messages = normalize(rows)
    problems = check_invariants(messages)
    if problems:
        raise TranscriptInvariantError(problems)
    ids = tool_ids.lowered(_tool_ids(messages), tool_ids.ANTHROPIC)
    # normalize dropped every blank text block: no breakpoint can land on one
    lowered = [_Lowering(request.files, ids).message(m) for m in messages]
    if summary:
        lowered[0]["content"][0] = _cached(lowered[0]["content"][0])
    return _params(request, lowered)


def _opening(summary: str) -> TextBlock:
    return TextBlock(text=render_summary(summary))


def _params(request: ProviderRequest, lowered: list[dict[str, Any]]) -> dict[str, Any]:
    """The request's params around its lowered messages, the last block of the last one
    marked as a breakpoint (in a copy: `lowered` may be kept for the next round)."""
    last = lowered[-1]
    content = last["content"]
    marked = {**last, "content": [*content[:-1], _cached(content[-1])]}
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": [*lowered[:-1], marked],
    }
    if request.system.strip():
        params["system"] = [_cached({"type": "text", "text": request.system})]
    if request.tools:
        tools = [_map_tool(t) for t in request.tools]
        params["tools"] = [*tools[:-1], _cached(tools[-1])]
    return params


def _tool_ids(messages: list[TranscriptMessage]) -> list[str]:
    """Every tool-call id `messages` name: of a tool_use, of the tool_result answering it."""
    found: list[str] = []
    for message in messages:
        for block in message.blocks:
            if isinstance(block, ToolUseBlock):
                found.append(block.id)
            elif isinstance(block, ToolResultBlock):
                found.append(block.tool_use_id)
    return found


def _map_tool(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


class _Lowering:
    """Blocks as the API takes them, with the files' bytes and the ids to send."""

    __slots__ = ("files", "ids")

    def __init__(self, files: Mapping[str, bytes], ids: Mapping[str, str]) -> None:
        self.files = files
        self.ids = ids

    def message(self, message: TranscriptMessage) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for block in message.blocks:
            if isinstance(block, AttachmentBlock):
                content.extend(self.file(block))
            elif isinstance(block, ToolResultBlock) and block.attachments:
                content.append(self.tool_result(block))
            else:
                content.append(self.block(block))
        return {"role": message.role, "content": content}

    def block(self, block: Block) -> dict[str, Any]:
        match block:
            case TextBlock(text=text):
                return {"type": "text", "text": text}
            case ToolUseBlock(id=id_, name=name, input=tool_input):
                return {"type": "tool_use", "id": self.ids[id_], "name": name, "input": tool_input}
            case ToolResultBlock(tool_use_id=id_, content=content, is_error=is_error):
                return {
                    "type": "tool_result",
                    "tool_use_id": self.ids[id_],
                    "content": content,
                    "is_error": is_error,
                }
        raise TypeError(f"unknown block {block!r}")

    def tool_result(self, block: ToolResultBlock) -> dict[str, Any]:
        """A tool result with pictures: the envelope's text, then each picture as an image."""
        lowered = self.block(block)
        content: list[dict[str, Any]] = [{"type": "text", "text": block.content}]
        for picture in block.attachments:
            content.extend(self.file(picture))
        lowered["content"] = content
        return lowered

    def file(self, block: AttachmentBlock) -> list[dict[str, Any]]:
        """A file as the API takes it, after a line naming it: an image or a (PDF) document
        block with its bytes in base64, or a text file's contents in a labelled text block."""
        label = f"[File: {block.describe()}]"
        data = self.files.get(block.id)
        if data is None:  # not stored (never expected): say so rather than fail the turn
            log.warning("attachment bytes missing", extra={"attachment_id": block.id})
            return [{"type": "text", "text": f"{label} (its contents are not available)"}]
        if block.form is AttachmentForm.TEXT:
            body = data.decode("utf-8", errors="replace")
            text = f'{label}\n<file name="{block.name}">\n{body}\n</file>'
            return [{"type": "text", "text": text}]
        source = {
            "type": "base64",
            "media_type": block.media_type,
            "data": base64.b64encode(data).decode("ascii"),
        }
        lowered: dict[str, Any] = {"type": block.form.value, "source": source}
        if block.form is AttachmentForm.DOCUMENT:
            lowered["title"] = block.name
        return [{"type": "text", "text": label}, lowered]
