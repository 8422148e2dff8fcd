"""What a notification looks like in Telegram, and where an answer to it is heard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.adapters.telegram_harness import start_app
from tests.adapters.test_telegram_replies import (
    ALICE,
    GROUP,
    has_notification,
    last_user_text,
    notification_message,
    said,
)
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import BOT_USERNAME, FakeTelegram
from tests.runtime.helpers import until


async def test_a_notification_that_opens_with_a_code_block_shows_it_as_code(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    message = "```\nkubectl get pods\n```\nShould I restart the deployment?"
    anthropic_api.script = [tools(("notify_operator", {"message": message})), text("asked")]
    app = await start_app(db_path, anthropic_api, telegram_api)
    try:
        telegram_api.push_message("check the pods", user=ALICE)
        await until(lambda: has_notification(telegram_api))
    finally:
        await app.stop()
    [sent] = [m["text"] for m in telegram_api.sent() if m["text"].startswith("\U0001f514")]
    code, after = sent.split("</pre>", 1)
    assert "kubectl get pods" in code.split("<pre", 1)[1], "the command is a code block"
    assert "Should I restart the deployment?" in after, "the question is not code"
    assert "Reply to this message" in after


async def test_an_answer_to_a_notification_is_heard_where_only_mentions_are(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """The notification says "Reply to this message": in a group that takes only mentions,
    that reply still reaches the agent (its other chatter does not)."""
    app = await start_app(
        db_path, anthropic_api, telegram_api, acme_extra={"respond_to": "mention"}
    )
    group: dict[str, Any] = {"chat": GROUP, "chat_type": "supergroup"}
    try:
        anthropic_api.script = [
            tools(("notify_operator", {"message": "Shall I clean /tmp?"})),
            text("I asked."),
            text("Cleaning /tmp."),
        ]
        question = f"@{BOT_USERNAME} check the disk"
        mention = telegram_api.entity("mention", question, f"@{BOT_USERNAME}")
        telegram_api.push_message(question, user=ALICE, entities=[mention], **group)
        await until(lambda: said(telegram_api, GROUP, "I asked."))
        [record] = await app.runtime.store.notifications()
        telegram_api.push_message("just chatting", user=ALICE, **group)
        notification = notification_message(telegram_api)
        telegram_api.push_message("yes", user=ALICE, reply_to_message=notification, **group)
        await until(lambda: said(telegram_api, GROUP, "Cleaning /tmp."))
    finally:
        await app.stop()
    assert len(anthropic_api.requests) == 3, "the chatter was not a prompt"
    prompt = last_user_text(anthropic_api.requests[2])
    assert f"[The operator answers your notification {record.notification_id}" in prompt
