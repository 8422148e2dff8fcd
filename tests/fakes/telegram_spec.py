"""The Telegram Bot API's published specification (../shared/specs/telegram/api.json, or the
copy vendored in tests/specs) as a request checker for the fake: the method exists, required
fields are there, each value has an allowed type, and message text is 1-4096 characters after
entity parsing. A broken request raises InvalidRequest with the 400 text the real API sends."""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
_SPEC_FILE = next(
    p
    for p in (
        _REPO.parent / "shared/specs/telegram/api.json",
        _REPO / "tests/specs/telegram/api.json",
    )
    if p.exists()
)
SPEC = json.loads(_SPEC_FILE.read_text())
TEXT_FIELDS = {"sendMessage": "text", "editMessageText": "text"}
# Flood control: what counts as a message in a chat, and what counts in the bot's 30/s.
ALLOWED_TAGS = {
    "b",
    "strong",
    "i",
    "em",
    "u",
    "ins",
    "s",
    "strike",
    "del",
    "a",
    "code",
    "pre",
    "tg-spoiler",
    "span",
    "blockquote",
    "tg-emoji",
}


class InvalidRequest(Exception):
    pass


def _type_ok(value: Any, types: list[str]) -> bool:
    for t in types:
        if t == "String" and isinstance(value, str):
            return True
        if t == "Integer" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if t == "Float" and isinstance(value, int | float) and not isinstance(value, bool):
            return True
        if t == "Boolean" and isinstance(value, bool):
            return True
        if t.startswith("Array of ") and isinstance(value, list):
            inner = t.removeprefix("Array of ")
            return all(_type_ok(v, [inner]) for v in value)
        if t in SPEC["types"] and isinstance(value, dict):
            return True
        if t == "InputFile" and isinstance(value, str | bytes):
            return True
    return False


def _decode(raw: str, types: list[str]) -> Any:
    """Form values arrive JSON-encoded, except plain strings."""
    if types == ["String"]:
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


class _EntityParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            raise InvalidRequest(
                f'Bad Request: can\'t parse entities: Unsupported start tag "{tag}"'
            )
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            raise InvalidRequest(f'Bad Request: can\'t parse entities: Unmatched end tag "{tag}"')

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def visible_text(text: str, parse_mode: str | None) -> str:
    if parse_mode != "HTML":
        return text
    if re.search(r"&(?!(lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);)", text):
        raise InvalidRequest("Bad Request: can't parse entities: Unsupported HTML entity")
    parser = _EntityParser()
    parser.feed(text)
    parser.close()
    if parser.stack:
        raise InvalidRequest(f"Bad Request: can't parse entities: unclosed <{parser.stack[-1]}>")
    return html.unescape("".join(parser.text))


def check(method: str, params: dict[str, str]) -> dict[str, Any]:
    spec = SPEC["methods"].get(method)
    if spec is None:
        raise LookupError(method)
    fields = {f["name"]: f for f in spec.get("fields", [])}
    decoded: dict[str, Any] = {}
    for name, raw in params.items():
        if name not in fields:
            continue  # the real API ignores unknown parameters
        value = _decode(raw, fields[name]["types"])
        if not _type_ok(value, fields[name]["types"]):
            raise InvalidRequest(
                f'Bad Request: field "{name}" must be of type {" or ".join(fields[name]["types"])}'
            )
        decoded[name] = value
    for name, f in fields.items():
        if f["required"] and name not in decoded:
            raise InvalidRequest(
                f"Bad Request: {name} is empty"
                if name == "text"
                else f'Bad Request: parameter "{name}" is required'
            )
    if method in TEXT_FIELDS:
        shown = visible_text(decoded[TEXT_FIELDS[method]], decoded.get("parse_mode"))
        if not shown.strip():
            raise InvalidRequest("Bad Request: message text is empty")
        if len(shown) > 4096:
            raise InvalidRequest("Bad Request: message is too long")
    if method == "sendMessageDraft":  # 0-4096 characters after entities parsing; id non-zero
        if decoded["draft_id"] == 0:
            raise InvalidRequest("Bad Request: draft_id must be non-zero")
        if len(visible_text(decoded.get("text", ""), decoded.get("parse_mode"))) > 4096:
            raise InvalidRequest("Bad Request: message is too long")
    return decoded
