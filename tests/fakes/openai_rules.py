"""The Chat Completions API's request rules, with OpenAI's wording, for the fake
(openai_api.py).

`check_chat_request` raises `InvalidRequest` with the message (and `param`, `code`) the real
API puts in its 400 `invalid_request_error`. It covers the roles, each role's content and
its parts (images as data URLs of the types the API takes, PDFs as `file` parts), the
pairing of `tool_calls` and `tool` messages (every `tool` message answers an id of the
assistant message before the run of tool messages it is in; every call is answered before
the next other message), tool-call ids (at most 64 characters; or, as Mistral's servers
want, exactly nine letters and digits: `IdRule`), the tools' shape, `stream_options`
without `stream`, and `max_tokens` on a reasoning model.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any

ROLES = ("system", "developer", "user", "assistant", "tool", "function")
PARTS = {
    "system": {"text"},
    "developer": {"text"},
    "user": {"text", "image_url", "input_audio", "file"},
    "assistant": {"text", "refusal"},
    "tool": {"text"},
}
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
DATA_URL = re.compile(r"^data:([\w.+/-]+);base64,(.*)$", re.S)
REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")
NINE = re.compile(r"^[a-zA-Z0-9]{9}$")


class InvalidRequest(Exception):
    def __init__(self, message: str, *, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.param = param
        self.code = code


@dataclass(frozen=True, slots=True)
class IdRule:
    """The tool-call ids a server takes: OpenAI's (at most 64 characters) or, with
    `nine_alnum`, exactly nine letters and digits (Mistral's)."""

    nine_alnum: bool = False
    max_length: int = 64

    def check(self, tool_id: Any, where: str) -> None:
        if not isinstance(tool_id, str):
            raise InvalidRequest(f"Invalid type for '{where}': expected a string.", param=where)
        if self.nine_alnum and not NINE.match(tool_id):
            raise InvalidRequest(
                f"Tool call id was {tool_id} but must be a-z, A-Z, 0-9, with a length of 9."
            )
        if len(tool_id) > self.max_length:
            raise InvalidRequest(
                f"Invalid '{where}': string too long. Expected a string with maximum length "
                f"{self.max_length}, but got a string with length {len(tool_id)} instead.",
                param=where,
                code="string_above_max_length",
            )


OPENAI_IDS = IdRule()
NINE_ALNUM_IDS = IdRule(nine_alnum=True, max_length=9)


def check_chat_request(body: dict[str, Any], ids: IdRule = OPENAI_IDS) -> None:
    for key in ("model", "messages"):
        if key not in body:
            raise InvalidRequest(
                f"Missing required parameter: '{key}'.",
                param=key,
                code="missing_required_parameter",
            )
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest(
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got "
            "an empty array instead.",
            param="messages",
            code="empty_array",
        )
    if body.get("stream_options") is not None and not body.get("stream"):
        raise InvalidRequest(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            param="stream_options",
            code="invalid_value",
        )
    if "max_tokens" in body and REASONING_MODEL.match(str(body["model"])):
        raise InvalidRequest(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
            param="max_tokens",
            code="unsupported_parameter",
        )
    for i, tool in enumerate(body.get("tools") or []):
        _check_tool(tool, i)
    _check_messages(messages, ids)


def _check_tool(tool: Any, i: int) -> None:
    if not isinstance(tool, dict) or "type" not in tool:
        raise InvalidRequest(
            f"Missing required parameter: 'tools[{i}].type'.",
            param=f"tools[{i}].type",
            code="missing_required_parameter",
        )
    if tool["type"] != "function":
        raise InvalidRequest(
            f"Invalid value: '{tool['type']}'. Supported values are: 'function' and 'custom'.",
            param=f"tools[{i}].type",
            code="invalid_value",
        )
    function = tool.get("function") or {}
    name = function.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise InvalidRequest(
            f"Invalid 'tools[{i}].function.name': string does not match pattern. Expected a "
            "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
            param=f"tools[{i}].function.name",
            code="invalid_value",
        )
    schema = function.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(schema, dict) or schema.get("type") != "object":
        got = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
        raise InvalidRequest(
            f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: "
            f'"object"\', got \'type: "{got}"\'.',
            param=f"tools[{i}].function.parameters",
            code="invalid_function_parameters",
        )


def _check_messages(messages: list[Any], ids: IdRule) -> None:
    offered: set[str] = set()  # the ids of the assistant message this run of tools answers
    pending: list[str] = []  # of those, not yet answered
    in_tool_run = False
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ROLES:
            raise InvalidRequest(
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', "
                "'function', 'tool', and 'developer'.",
                param=f"messages[{i}].role",
                code="invalid_value",
            )
        if role == "tool":
            if not in_tool_run:
                raise InvalidRequest(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    param=f"messages.[{i}].role",
                )
            answered = message.get("tool_call_id")
            ids.check(answered, f"messages[{i}].tool_call_id")
            if answered not in offered:
                raise InvalidRequest(
                    f"Invalid parameter: 'tool_call_id' of '{answered}' not found in "
                    "'tool_calls' of previous message.",
                    param=f"messages.[{i}].tool_call_id",
                )
            pending = [p for p in pending if p != answered]
        else:
            _unanswered(pending, i)
            offered, in_tool_run = set(), False
            if role == "assistant":
                calls = _check_calls(message, i, ids)
                offered, pending, in_tool_run = set(calls), list(calls), bool(calls)
        _check_content(role, message, i)
    _unanswered(pending, len(messages))


def _unanswered(pending: list[str], i: int) -> None:
    if pending:
        raise InvalidRequest(
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(pending)}",
            param=f"messages.[{i}].role",
        )


def _check_calls(message: dict[str, Any], i: int, ids: IdRule) -> list[str]:
    calls = message.get("tool_calls") or []
    found: list[str] = []
    for j, call in enumerate(calls):
        where = f"messages[{i}].tool_calls[{j}]"
        ids.check(call.get("id"), f"{where}.id")
        if call.get("type") != "function":
            raise InvalidRequest(f"Missing required parameter: '{where}.type'.", param=where)
        function = call.get("function") or {}
        if not isinstance(function.get("name"), str):
            raise InvalidRequest(f"Missing required parameter: '{where}.function.name'.")
        if not isinstance(function.get("arguments"), str):
            raise InvalidRequest(
                f"Invalid type for '{where}.function.arguments': expected a string, but got "
                f"{type(function.get('arguments')).__name__} instead.",
                param=f"{where}.function.arguments",
                code="invalid_type",
            )
        found.append(call["id"])
    return found


def _check_content(role: str, message: dict[str, Any], i: int) -> None:
    content = message.get("content")
    if content is None:
        if role == "assistant" and message.get("tool_calls"):
            return
        raise InvalidRequest(
            "Invalid value for 'content': expected a string, got null.",
            param=f"messages.[{i}].content",
        )
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise InvalidRequest(
            f"Invalid type for 'messages[{i}].content': expected one of a string or array of "
            "objects.",
            param=f"messages[{i}].content",
            code="invalid_type",
        )
    for j, part in enumerate(content):
        where = f"messages[{i}].content[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in PARTS[role]:
            allowed = ", ".join(f"'{p}'" for p in sorted(PARTS[role]))
            raise InvalidRequest(
                f"Invalid value: '{kind}'. Supported values are: {allowed}.",
                param=f"{where}.type",
                code="invalid_value",
            )
        if kind == "image_url":
            _check_data_url(str((part.get("image_url") or {}).get("url")), IMAGE_TYPES, where)
        elif kind == "file":
            data = str((part.get("file") or {}).get("file_data"))
            _check_data_url(data, ("application/pdf",), where)
        elif kind == "text" and not isinstance(part.get("text"), str):
            raise InvalidRequest(f"Missing required parameter: '{where}.text'.")


def _check_data_url(url: str, types: tuple[str, ...], where: str) -> None:
    if url.startswith(("https://", "http://")):
        return
    found = DATA_URL.match(url)
    if not found or found.group(1) not in types:
        raise InvalidRequest(
            f"Invalid '{where}'. Expected a base64-encoded data URL with one of the types "
            f"{', '.join(types)}, but got {url[:40]!r}.",
            param=where,
            code="invalid_value",
        )
    try:
        base64.b64decode(found.group(2), validate=True)
    except binascii.Error:
        raise InvalidRequest(
            f"Invalid '{where}': the data URL is not valid base64.",
            param=where,
            code="invalid_value",
        ) from None
