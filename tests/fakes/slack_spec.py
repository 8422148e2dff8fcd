"""The Slack Web API specification (../shared/specs/slack/slack_web_openapi_v2.json) as an
oracle for the fake: `check` refuses, with the error Slack gives, a call to a method that does
not exist, without a token, missing a required argument, with an argument the method does not
take or of the wrong type, or a message beyond Slack's limits on text, blocks and buttons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]
_SPEC_FILE = next(
    p
    for p in (
        _REPO.parent / "shared/specs/slack/slack_web_openapi_v2.json",
        _REPO / "tests/specs/slack/slack_web_openapi_v2.json",
    )
    if p.exists()
)
_SPEC = json.loads(_SPEC_FILE.read_text())

# Newer than the spec file, from Slack's method pages (api.slack.com/methods/...).
_NEWER_METHODS: dict[str, dict[str, tuple[str, bool]]] = {
    # assistant.threads.setStatus: channel_id, thread_ts, status required; loading_messages.
    "assistant.threads.setStatus": {
        "channel_id": ("string", True),
        "thread_ts": ("string", True),
        "status": ("string", True),
        "loading_messages": ("array", False),
    },
    # assistant.threads.setSuggestedPrompts: channel_id, thread_ts and prompts (a list of up
    # to 4 objects, each with a title and a message) required; a title over them.
    "assistant.threads.setSuggestedPrompts": {
        "channel_id": ("string", True),
        "thread_ts": ("string", True),
        "prompts": ("array", True),
        "title": ("string", False),
    },
    # apps.connections.open: an app-level token (xapp-) and nothing else.
    "apps.connections.open": {},
    # The streaming methods for AI apps (docs.slack.dev/reference/methods/chat.startStream,
    # chat.appendStream, chat.stopStream). markdown_text: at most 12,000 characters each
    # call; recipient_team_id and recipient_user_id are required when streaming to a
    # channel (checked by the fake, not here).
    "chat.startStream": {
        "channel": ("string", True),
        "thread_ts": ("string", True),
        "markdown_text": ("string", False),
        "recipient_team_id": ("string", False),
        "recipient_user_id": ("string", False),
        "chunks": ("array", False),
        "task_display_mode": ("string", False),
        "icon_emoji": ("string", False),
        "icon_url": ("string", False),
        "username": ("string", False),
    },
    "chat.appendStream": {
        "channel": ("string", True),
        "ts": ("string", True),
        "markdown_text": ("string", True),
        "chunks": ("array", False),
    },
    "chat.stopStream": {
        "channel": ("string", True),
        "ts": ("string", True),
        "markdown_text": ("string", False),
        "blocks": ("array", False),
        "metadata": ("object", False),
        "chunks": ("array", False),
        "session_status": ("string", False),
    },
}
STREAMING = ("chat.startStream", "chat.appendStream", "chat.stopStream")
MAX_STREAM_TEXT = 12_000
_NEWER_ARGUMENTS: dict[str, dict[str, tuple[str, bool]]] = {
    # Message metadata: chat.postMessage/chat.update `metadata`; reading it back needs
    # `include_all_metadata` on conversations.history and conversations.replies.
    "chat.postMessage": {"metadata": ("object", False)},
    "chat.update": {"metadata": ("object", False)},
    "conversations.history": {"include_all_metadata": ("boolean", False)},
    "conversations.replies": {"include_all_metadata": ("boolean", False)},
}
JSON_STRINGS = {"blocks", "attachments", "metadata"}  # "a JSON-based array ... as a string"
MAX_TEXT = 40_000  # chat.postMessage: longer text is refused with msg_too_long
MAX_PROMPTS = 4  # assistant.threads.setSuggestedPrompts
MAX_BLOCKS, MAX_SECTION_TEXT, MAX_BUTTON_TEXT, MAX_ACTION_ID = 50, 3000, 75, 255
MAX_ACTIONS, MAX_BUTTON_VALUE = 25, 2000  # elements in an actions block; a button's value


def _methods() -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for path, ops in _SPEC["paths"].items():
        method = path.lstrip("/")
        params: dict[str, tuple[str, bool]] = {}
        verbs = set()
        for verb, op in ops.items():
            verbs.add(verb.upper())
            for p in op.get("parameters", []):
                params[p["name"]] = (p.get("type", "string"), bool(p.get("required")))
        params.update(_NEWER_ARGUMENTS.get(method, {}))
        table[method] = {"params": params, "verbs": verbs | {"POST"}}
    for method, params in _NEWER_METHODS.items():
        table[method] = {"params": dict(params), "verbs": {"POST"}}
    return table


METHODS = _methods()


class SlackError(Exception):
    def __init__(self, error: str, status: int = 200) -> None:
        super().__init__(error)
        self.error = error
        self.status = status


def _typed(name: str, value: Any, kind: str) -> Any:
    """The value as the declared type, or SlackError("invalid_arguments")."""
    if kind in ("object", "array") or name in JSON_STRINGS:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                raise SlackError(f"invalid_{name}") from None
        if not isinstance(value, dict | list):
            raise SlackError(f"invalid_{name}")
        return value
    ok = {
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool) or str(value).lower() in ("true", "false", "0", "1"),
        "integer": isinstance(value, int) or str(value).isdigit(),
        "number": _is_number(value),
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
    }.get(kind, True)
    if not ok:
        raise SlackError("invalid_arguments")
    return value


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return not isinstance(value, bool)


def truthy(value: Any) -> bool:
    return value is True or str(value).lower() in ("true", "1")


def check(method: str, verb: str, args: dict[str, Any], token: str | None) -> dict[str, Any]:
    spec = METHODS.get(method)
    if spec is None:
        raise SlackError("unknown_method", 404)
    if verb not in spec["verbs"]:
        raise SlackError("method_not_allowed")
    if not token:
        raise SlackError("not_authed")
    params = spec["params"]
    unknown = sorted(set(args) - set(params))
    if unknown:
        raise SlackError(f"invalid_arguments: {unknown[0]} is not an argument of {method}")
    for name, (kind, required) in params.items():
        if name == "token":
            continue
        if required and name not in args:
            raise SlackError(f"invalid_arguments: missing {name}")
        if name in args:
            args[name] = _typed(name, args[name], kind)
    if method in ("chat.postMessage", "chat.update"):
        _check_message(args)
    if method == "assistant.threads.setSuggestedPrompts":
        _check_prompts(args["prompts"])
    if method in STREAMING and len(args.get("markdown_text") or "") > MAX_STREAM_TEXT:
        raise SlackError("msg_too_long")
    return args


def _check_prompts(prompts: Any) -> None:
    if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS:
        raise SlackError("invalid_arguments: prompts must be a list of 1 to 4 prompts")
    for prompt in prompts:
        if not isinstance(prompt, dict) or set(prompt) != {"title", "message"}:
            raise SlackError("invalid_arguments: a prompt has exactly a title and a message")
        if not all(isinstance(v, str) and v for v in prompt.values()):
            raise SlackError("invalid_arguments: a prompt's title and message are text")


def check_response(body: Any) -> None:
    """A message posted to a slash command's `response_url`: JSON with text (or blocks), and
    a response_type of "ephemeral" (the default: only the user sees it) or "in_channel"."""
    if not isinstance(body, dict):
        raise SlackError("invalid_payload", 400)
    if not body.get("text") and not body.get("blocks"):
        raise SlackError("no_text", 400)
    if len(str(body.get("text") or "")) > MAX_TEXT:
        raise SlackError("msg_too_long", 400)
    if body.get("response_type", "ephemeral") not in ("ephemeral", "in_channel"):
        raise SlackError("invalid_response_type", 400)


def _check_message(args: dict[str, Any]) -> None:
    text, blocks = args.get("text"), args.get("blocks")
    if not text and not blocks:
        raise SlackError("no_text")
    if text and len(text) > MAX_TEXT:
        raise SlackError("msg_too_long")
    metadata = args.get("metadata")
    if metadata is not None and not (
        isinstance(metadata, dict)
        and isinstance(metadata.get("event_type"), str)
        and isinstance(metadata.get("event_payload"), dict)
    ):
        raise SlackError("invalid_metadata")
    if blocks is None:
        return
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        raise SlackError("invalid_blocks")
    for block in blocks:
        if block.get("type") == "section":
            if len(block.get("text", {}).get("text", "")) > MAX_SECTION_TEXT:
                raise SlackError("invalid_blocks")
        elif block.get("type") == "actions":
            elements = block.get("elements", [])
            actions = [e.get("action_id") for e in elements]
            if len(elements) > MAX_ACTIONS or len(set(actions)) < len(actions):
                raise SlackError("invalid_blocks")  # action ids are unique within a block
            for element in elements:
                label = element.get("text", {}).get("text", "")
                if not label or len(label) > MAX_BUTTON_TEXT:
                    raise SlackError("invalid_blocks")
                if len(element.get("action_id", "")) > MAX_ACTION_ID:
                    raise SlackError("invalid_blocks")
                if len(str(element.get("value", ""))) > MAX_BUTTON_VALUE:
                    raise SlackError("invalid_blocks")
        else:
            raise SlackError("invalid_blocks")
