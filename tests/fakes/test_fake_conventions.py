"""The oracles for the platforms' conventions: what Telegram refuses in a command menu or a
reaction, what Slack refuses in suggested prompts or a slash command's answer, is refused by
the fakes too."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakes.slack_spec import SlackError, check, check_response
from tests.fakes.telegram_spec import InvalidRequest
from tests.fakes.telegram_spec import check as telegram_check

THREAD = {"channel_id": "D1", "thread_ts": "1.2"}


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"channel_id": "D1", "prompts": [{"title": "a", "message": "b"}]}, "missing thread_ts"),
        ({**THREAD}, "missing prompts"),
        ({**THREAD, "prompts": []}, "1 to 4 prompts"),
        ({**THREAD, "prompts": [{"title": "a", "message": "b"}] * 5}, "1 to 4 prompts"),
        ({**THREAD, "prompts": [{"title": "a"}]}, "exactly a title and a message"),
        ({**THREAD, "prompts": [{"title": "a", "message": ""}]}, "are text"),
    ],
)
def test_bad_suggested_prompts_are_refused(args: dict[str, Any], error: str) -> None:
    with pytest.raises(SlackError) as caught:
        check("assistant.threads.setSuggestedPrompts", "POST", dict(args), "xoxb")
    assert error in caught.value.error


def test_good_suggested_prompts_pass() -> None:
    args = {**THREAD, "title": "Try", "prompts": [{"title": "Status", "message": "/status"}]}
    assert check("assistant.threads.setSuggestedPrompts", "POST", args, "xoxb")


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ([], "invalid_payload"),
        ({"response_type": "ephemeral"}, "no_text"),
        ({"text": "hi", "response_type": "whisper"}, "invalid_response_type"),
    ],
)
def test_a_bad_slash_command_answer_is_refused(body: Any, error: str) -> None:
    with pytest.raises(SlackError) as caught:
        check_response(body)
    assert caught.value.error == error


@pytest.mark.parametrize(
    ("commands", "error"),
    [
        ([{"command": "Status", "description": "x"}], "BOT_COMMAND_INVALID"),
        ([{"command": "a" * 33, "description": "x"}], "BOT_COMMAND_INVALID"),
        ([{"command": "status", "description": ""}], "BOT_COMMAND_DESCRIPTION_INVALID"),
    ],
)
def test_a_bad_command_menu_is_refused(commands: list[dict[str, str]], error: str) -> None:
    with pytest.raises(InvalidRequest, match=error):
        telegram_check("setMyCommands", {"commands": json.dumps(commands)})


@pytest.mark.parametrize(
    ("reaction", "error"),
    [
        ([{"type": "emoji", "emoji": "\u2705"}], "REACTION_INVALID"),  # not on the list
        ([{"type": "emoji", "emoji": "\U0001f440"}] * 2, "REACTIONS_TOO_MANY"),
    ],
)
def test_a_reaction_telegram_does_not_allow_is_refused(
    reaction: list[dict[str, str]], error: str
) -> None:
    params = {"chat_id": "1", "message_id": "2", "reaction": json.dumps(reaction)}
    with pytest.raises(InvalidRequest, match=error):
        telegram_check("setMessageReaction", params)


def test_an_allowed_reaction_passes() -> None:
    eyes = json.dumps([{"type": "emoji", "emoji": "\U0001f440"}])
    assert telegram_check(
        "setMessageReaction", {"chat_id": "1", "message_id": "2", "reaction": eyes}
    )


def keyboard(*buttons: dict[str, str]) -> str:
    return json.dumps({"inline_keyboard": [list(buttons)]})


@pytest.mark.parametrize(
    ("markup", "error"),
    [
        (keyboard({"text": "Pause", "callback_data": "x" * 65}), "BUTTON_DATA_INVALID"),
        (keyboard({"text": "Pause", "callback_data": "\u00e9" * 33}), "BUTTON_DATA_INVALID"),
        (keyboard({"text": "Pause", "callback_data": ""}), "BUTTON_DATA_INVALID"),
        (keyboard({"text": " ", "callback_data": "cmd:0"}), "BUTTON_TEXT_INVALID"),
    ],
)
def test_an_inline_keyboard_telegram_refuses_is_refused(markup: str, error: str) -> None:
    params = {"chat_id": "1", "text": "Schedules:", "reply_markup": markup}
    with pytest.raises(InvalidRequest, match=error):
        telegram_check("sendMessage", params)


def test_an_inline_keyboard_of_64_bytes_passes() -> None:
    markup = keyboard({"text": "Pause", "callback_data": "x" * 64})
    assert telegram_check("sendMessage", {"chat_id": "1", "text": "hi", "reply_markup": markup})


def button(action_id: str, value: str = "0", label: str = "Pause") -> dict[str, Any]:
    return {"type": "button", "action_id": action_id, "value": value, "text": {"text": label}}


@pytest.mark.parametrize(
    "elements",
    [
        [button("a", value="v" * 2001)],
        [button("a"), button("a")],  # one action id twice in a block
        [button(f"a{i}") for i in range(26)],
        [button("a", label="L" * 76)],
    ],
    ids=["value-over-2000", "same-action-id", "26-elements", "label-over-75"],
)
def test_buttons_slack_refuses_are_refused(elements: list[dict[str, Any]]) -> None:
    blocks = [
        {"type": "section", "text": {"text": "hi"}},
        {"type": "actions", "elements": elements},
    ]
    with pytest.raises(SlackError) as caught:
        check("chat.postMessage", "POST", {"channel": "D1", "blocks": blocks}, "xoxb")
    assert caught.value.error == "invalid_blocks"
