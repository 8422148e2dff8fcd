"""The Telegram Bot API's published specification (../shared/specs/telegram/api.json, or the
copy vendored in tests/specs) as a request checker for the fake: the method exists, required
fields are there, each value has an allowed type, and message text is 1-4096 characters after
entity parsing. A broken request raises InvalidRequest with the 400 text the real API sends."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.fakes import telegram_html

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


class InvalidRequest(Exception):
    pass


def _reaction_emoji() -> frozenset[str]:
    """The emoji a bot may react with, as ReactionTypeEmoji's description lists them."""
    fields = SPEC["types"]["ReactionTypeEmoji"]["fields"]
    listed = next(f["description"] for f in fields if f["name"] == "emoji")
    return frozenset(re.findall(r'"([^"]+)"', listed.split("one of", 1)[1]))


REACTION_EMOJI = _reaction_emoji()
COMMAND_NAME = re.compile(r"^[a-z0-9_]{1,32}$")


def _check_commands(commands: list[Any]) -> None:
    """setMyCommands: each BotCommand's command and description as the spec describes them."""
    if len(commands) > 100:
        raise InvalidRequest("Bad Request: too many commands specified")
    for c in commands:
        if not isinstance(c, dict) or not COMMAND_NAME.match(str(c.get("command", ""))):
            raise InvalidRequest("Bad Request: BOT_COMMAND_INVALID")
        if not isinstance(c.get("description"), str) or not 1 <= len(c["description"]) <= 256:
            raise InvalidRequest("Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")


def _check_reaction(reaction: list[Any]) -> None:
    """setMessageReaction: a bot sets at most one reaction, an emoji from the allowed list."""
    if len(reaction) > 1:
        raise InvalidRequest("Bad Request: REACTIONS_TOO_MANY")
    for r in reaction:
        if not isinstance(r, dict) or r.get("type") != "emoji":
            raise InvalidRequest("Bad Request: REACTION_INVALID")
        if r.get("emoji") not in REACTION_EMOJI:
            raise InvalidRequest("Bad Request: REACTION_INVALID")


def _check_keyboard(markup: Any) -> None:
    """An inline keyboard (InlineKeyboardMarkup): rows of buttons, each with a label and its
    callback data of 1-64 bytes, as InlineKeyboardButton's description says."""
    if not isinstance(markup, dict) or "inline_keyboard" not in markup:
        return  # another kind of markup (a reply keyboard): not ours to check
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise InvalidRequest("Bad Request: can't parse inline keyboard button: rows expected")
    for button in (b for row in rows for b in row):
        if not isinstance(button, dict) or not str(button.get("text") or "").strip():
            raise InvalidRequest("Bad Request: BUTTON_TEXT_INVALID")
        data = button.get("callback_data")
        if data is not None and not 1 <= len(str(data).encode()) <= 64:
            raise InvalidRequest("Bad Request: BUTTON_DATA_INVALID")


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


def visible_text(text: str, parse_mode: str | None) -> str:
    """The text after entity parsing (`tests/fakes/telegram_html.py` for HTML)."""
    if parse_mode != "HTML":
        return text
    try:
        return telegram_html.parse(text)
    except telegram_html.EntityError as exc:
        raise InvalidRequest(str(exc)) from None


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
    if method == "setMyCommands":
        _check_commands(decoded["commands"])
    if method == "setMessageReaction":
        _check_reaction(decoded.get("reaction", []))
    if "reply_markup" in decoded:
        _check_keyboard(decoded["reply_markup"])
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


def check_edit(shown: dict[Any, str], before: dict[str, Any] | None, p: dict[str, Any]) -> None:
    """editMessageText as Telegram refuses it: a message the chat does not show (`shown`, its
    messages' text by id), or an edit that would leave it exactly as it is (`before`: the
    message as last sent or edited, its text and its keyboard)."""
    if p.get("message_id") not in shown:
        raise InvalidRequest("Bad Request: message to edit not found")
    text = visible_text(p["text"], p.get("parse_mode"))
    same_keyboard = before is not None and before.get("reply_markup") == p.get("reply_markup")
    if same_keyboard and before is not None and before.get("text") == text:
        raise InvalidRequest(
            "Bad Request: message is not modified: specified new message content and reply"
            " markup are exactly the same as a current content and reply markup of the message"
        )
