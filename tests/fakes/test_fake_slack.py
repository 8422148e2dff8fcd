"""The Slack oracle itself: calls the real API refuses are refused here too."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.slack_spec import SlackError, check

OK_POST = {"channel": "C1", "text": "hi", "metadata": {"event_type": "e", "event_payload": {}}}


@pytest.mark.parametrize(
    ("method", "args", "token", "error"),
    [
        ("chat.postMesage", {"channel": "C1", "text": "hi"}, "xoxb", "unknown_method"),
        ("chat.postMessage", {"channel": "C1", "text": "hi"}, None, "not_authed"),
        ("chat.postMessage", {"text": "hi"}, "xoxb", "invalid_arguments: missing channel"),
        ("chat.postMessage", {"channel": "C1"}, "xoxb", "no_text"),
        ("chat.postMessage", {"channel": "C1", "text": "x" * 40_001}, "xoxb", "msg_too_long"),
        ("chat.postMessage", {**OK_POST, "colour": "red"}, "xoxb", "invalid_arguments: colour"),
        (
            "chat.postMessage",
            {**OK_POST, "metadata": {"event_type": 1}},
            "xoxb",
            "invalid_metadata",
        ),
        ("chat.postMessage", {"channel": 5, "text": "hi"}, "xoxb", "invalid_arguments"),
        ("reactions.add", {"channel": "C1", "name": "eyes"}, "xoxb", "missing timestamp"),
        (
            "chat.update",
            {"channel": "C1", "ts": "1.2", "blocks": [{"type": "actions", "elements": [{}]}]},
            "xoxb",
            "invalid_blocks",
        ),
    ],
)
def test_broken_calls_are_refused(
    method: str, args: dict[str, Any], token: str | None, error: str
) -> None:
    with pytest.raises(SlackError) as caught:
        check(method, "POST", dict(args), token)
    assert error in caught.value.error


def test_a_good_call_and_the_newer_methods_pass() -> None:
    assert check("chat.postMessage", "POST", dict(OK_POST), "xoxb")["channel"] == "C1"
    status = {"channel_id": "D1", "thread_ts": "1.2", "status": "is working"}
    assert check("assistant.threads.setStatus", "POST", status, "xoxb")
    replies = {"channel": "C1", "ts": "1.2", "include_all_metadata": "1", "limit": "200"}
    assert check("conversations.replies", "GET", replies, "xoxb")
