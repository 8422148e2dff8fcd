"""The real Messages API's request rules, with its wording, for the fake (anthropic_api.py).

`check_request` raises `InvalidRequest` with the message the real API puts in its 400
`invalid_request_error`. It covers the shape (required fields, roles, alternation, non-empty
text), tool_use/tool_result pairing, unique tool_use ids and what they may be spelled with,
the system prompt, and `cache_control`: only on tool definitions, system text blocks and
content blocks, never on an empty text block, at most four in a request; image and document
blocks by `anthropic_media.py`.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from tests.fakes.anthropic_media import MediaError, check_media_block

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
MAX_BREAKPOINTS = 4


class InvalidRequest(Exception):
    pass


def blocks_of(content: Any) -> list[dict[str, Any]]:
    """A message's (or system prompt's) content as blocks: a string is one text block."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def check_request(body: dict[str, Any], *, counting: bool = False) -> None:
    """The rules of `POST /v1/messages` (`counting`: of `/v1/messages/count_tokens`, which
    takes no max_tokens)."""
    required: list[tuple[str, type]] = [("model", str), ("messages", list)]
    if not counting:
        required.append(("max_tokens", int))
    for key, kind in required:
        if key not in body:
            raise InvalidRequest(f"{key}: Field required")
        if not isinstance(body[key], kind):
            raise InvalidRequest(f"{key}: Input should be a valid {kind.__name__}")
    if not counting and body["max_tokens"] < 1:
        raise InvalidRequest("max_tokens: Input should be greater than or equal to 1")
    breakpoints = _check_tools(body.get("tools") or []) + _check_system(body.get("system"))
    messages = body["messages"]
    if not messages:
        raise InvalidRequest("messages: at least one message is required")
    if messages[0].get("role") != "user":
        raise InvalidRequest('messages: first message must use the "user" role')
    seen: set[str] = set()
    for i in range(len(messages)):
        breakpoints += _check_message(messages, i, seen)
    if breakpoints > MAX_BREAKPOINTS:
        raise InvalidRequest(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {breakpoints}."
        )


def _cache_control(block: dict[str, Any], where: str) -> int:
    """1 if `block` is a valid cache breakpoint, 0 if it has none."""
    control = block.get("cache_control")
    if control is None:
        return 0
    if not isinstance(control, dict) or control.get("type") != "ephemeral":
        raise InvalidRequest(f"{where}.cache_control.type: Input should be 'ephemeral'")
    if control.get("ttl", "5m") not in ("5m", "1h"):
        raise InvalidRequest(f"{where}.cache_control.ttl: Input should be '5m' or '1h'")
    if block.get("type") == "text" and block.get("text") == "":
        raise InvalidRequest(f"{where}.text: cache_control cannot be set for empty text blocks")
    return 1


def _check_tools(tools: list[dict[str, Any]]) -> int:
    breakpoints = 0
    for i, tool in enumerate(tools):
        if not TOOL_NAME.match(str(tool.get("name", ""))):
            raise InvalidRequest(
                f"tools.{i}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            )
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise InvalidRequest(f"tools.{i}.input_schema.type: Input should be 'object'")
        breakpoints += _cache_control(tool, f"tools.{i}")
    return breakpoints


def _check_system(system: Any) -> int:
    if system is None or isinstance(system, str):
        return 0
    if not isinstance(system, list):
        raise InvalidRequest("system: Input should be a valid string or a list of text blocks")
    breakpoints = 0
    for i, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise InvalidRequest(f"system.{i}.type: Input should be 'text'")
        breakpoints += _cache_control(block, f"system.{i}")
        if not str(block.get("text", "")).strip():
            raise InvalidRequest("system: text content blocks must be non-empty")
    return breakpoints


def _check_message(messages: list[dict[str, Any]], i: int, seen: set[str]) -> int:
    message = messages[i]
    role, content = message.get("role"), message.get("content")
    if role not in ("user", "assistant"):
        raise InvalidRequest(f"messages.{i}.role: Input should be 'user' or 'assistant'")
    if "cache_control" in message:
        raise InvalidRequest(f"messages.{i}.cache_control: Extra inputs are not permitted")
    if i and messages[i - 1]["role"] == role:
        raise InvalidRequest('messages: roles must alternate between "user" and "assistant"')
    blocks = blocks_of(content)
    if not blocks and not (i == len(messages) - 1 and role == "assistant"):
        raise InvalidRequest(
            f"messages.{i}: all messages must have non-empty content except for the "
            "optional final assistant message"
        )
    breakpoints = 0
    for j, block in enumerate(blocks):
        breakpoints += _cache_control(block, f"messages.{i}.content.{j}")
        _check_block(role, block, f"messages.{i}.content.{j}", seen)
    _check_pairing(messages, i, blocks)
    return breakpoints


def _check_block(role: str, block: dict[str, Any], where: str, seen: set[str]) -> None:
    kind = block.get("type")
    if kind == "text":
        if block.get("text") == "":
            raise InvalidRequest("messages: text content blocks must be non-empty")
        if not str(block.get("text")).strip():
            raise InvalidRequest("messages: text content blocks must contain non-whitespace text")
    elif kind == "tool_use":
        if role != "assistant":
            raise InvalidRequest(f"{where}: tool_use is only allowed in assistant messages")
        _check_tool_id(block.get("id"), f"{where}.tool_use.id")
        if block["id"] in seen:
            raise InvalidRequest(f"{where}: `tool_use` ids must be unique")
        seen.add(block["id"])
    elif kind == "tool_result":
        if role != "user":
            raise InvalidRequest(f"{where}: tool_result is only allowed in user messages")
        _check_tool_id(block.get("tool_use_id"), f"{where}.tool_result.tool_use_id")
        content = block.get("content")
        if isinstance(content, list):  # text and image blocks, as the API takes them there
            for k, inner in enumerate(content):
                if inner.get("type") not in ("text", "image", "document"):
                    raise InvalidRequest(
                        f"{where}.content.{k}.type: a tool_result holds text, image and "
                        f"document blocks, not {inner.get('type')!r}"
                    )
                _check_block(role, inner, f"{where}.content.{k}", seen)
    elif kind in ("image", "document"):
        try:
            check_media_block(role, block, where)
        except MediaError as exc:
            raise InvalidRequest(str(exc)) from None
    else:
        raise InvalidRequest(f"{where}.type: unknown block type {kind!r}")


def _check_tool_id(tool_id: Any, where: str) -> None:
    if not isinstance(tool_id, str) or not TOOL_ID.match(tool_id):
        raise InvalidRequest(f"{where}: String should match pattern '^[a-zA-Z0-9_-]+$'")


def _check_pairing(messages: list[dict[str, Any]], i: int, blocks: list[dict[str, Any]]) -> None:
    role = messages[i]["role"]
    if role == "assistant":
        ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if not ids:
            return
        following = blocks_of(messages[i + 1]["content"]) if i + 1 < len(messages) else []
        leading = list(itertools.takewhile(lambda b: b.get("type") == "tool_result", following))
        answered = {b.get("tool_use_id") for b in leading}
        missing = [x for x in ids if x not in answered]
        if missing:
            raise InvalidRequest(
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
    else:
        previous = blocks_of(messages[i - 1]["content"]) if i else []
        offered = {b["id"] for b in previous if b.get("type") == "tool_use"}
        for j, block in enumerate(blocks):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in offered:
                raise InvalidRequest(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
        kinds = [b.get("type") for b in blocks]
        first_other = next((k for k, t in enumerate(kinds) if t != "tool_result"), len(kinds))
        if "tool_result" in kinds[first_other:]:
            raise InvalidRequest(
                f"messages.{i}: `tool_result` blocks must come first in the content"
            )
