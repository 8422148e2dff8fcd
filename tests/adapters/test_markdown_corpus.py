"""Answers as models write them (tests/adapters/markdown_corpus/*.md, and a few long ones made
here), split and rendered as the outbox does, posted through python-telegram-bot and slack_sdk
to the spec-checking fakes. Telegram's fake parses the HTML as the Bot API does: a refusal
would make the transport fall back to plain text, so none may happen. And a reader finds
every word of the answer, its code verbatim, no code block cut open, few messages."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from slack_sdk.web.async_client import AsyncWebClient
from telegram.ext import Application

from adapters.slack.platform import SLACK
from adapters.slack.transport import SlackTransport
from adapters.telegram.platform import TELEGRAM
from adapters.telegram.transport import TelegramTransport
from bridge.platform import PlatformProfile
from bridge.split import split
from bridge.transport import Post
from bridge.types import DeliveryKind, Route
from tests.adapters.markdown_view import (
    code_blocks,
    expected_words,
    slack_shown,
    unclosed_fences,
    words,
)
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.telegram_spec import visible_text

CORPUS = Path(__file__).parent / "markdown_corpus"


def _long_answers() -> dict[str, str]:
    prose = "\n\n".join(
        f"## Part {i}\n\n" + f"Paragraph {i} says **something** about `x_{i}` & <y> " * 40
        for i in range(12)
    )
    code = "```python\n" + "\n".join(
        f"def f_{i}(a, b):  # a < b && b > 0\n    return a ** {i} * b" for i in range(400)
    )
    items = "\n".join(
        f"{i + 1}. Item **{i}** with [a link](https://example.com/{i}_(x))\n   - sub `{i}`"
        for i in range(120)
    )
    table = "| # | name | note |\n|--:|---|---|\n" + "\n".join(
        f"| {i} | `row_{i}` | a < b & c |" for i in range(160)
    )
    return {
        "long-prose": prose,
        "long-code-unclosed": code + "\nprint('done')",
        "long-list": items,
        "long-table": table,
        "long-quote": "\n".join(f"> quoted line {i} with *emphasis* & more" for i in range(120)),
        "long-code-line": "```\n" + "word " * 1500 + "\n```\nAfter the long line.",
    }


ANSWERS = {p.stem: p.read_text() for p in sorted(CORPUS.glob("*.md"))} | _long_answers()


def _chunks(profile: PlatformProfile, markdown: str) -> list[str]:
    limit = profile.limits.max_chars
    return split(markdown, limit, lambda s: len(profile.render(s)))


def _check_what_a_reader_sees(
    profile: PlatformProfile, markdown: str, chunks: list[str], shown: list[str]
) -> None:
    limit = profile.limits.max_chars
    assert not expected_words(markdown) - words("\n".join(shown)), "a word went missing"
    lines = "\n".join(shown).split("\n")
    for block in code_blocks(markdown):
        at = 0
        for line in block.body.split("\n"):
            if line.strip() and len(line) < limit // 2:  # a longer line is cut to fit
                at = next(i for i in range(at, len(lines)) if line in lines[i]) + 1
    assert all(not unclosed_fences(c) for c in chunks), "a code block was cut open"
    total = len(profile.render(markdown))
    assert len(chunks) == 1 if total <= limit else len(chunks) <= 2 * math.ceil(total / limit)
    assert all(len(profile.render(c)) <= limit for c in chunks)


@pytest.fixture
async def telegram(telegram_api: FakeTelegram) -> AsyncIterator[TelegramTransport]:
    telegram_api.enforce_limits = False  # pacing is tried elsewhere; here every answer at once
    app = Application.builder().token(telegram_api.token).base_url(telegram_api.base_url)
    async with app.build() as application:
        yield TelegramTransport(application)


@pytest.fixture
async def slack(slack_api: FakeSlack) -> AsyncIterator[SlackTransport]:
    slack_api.enforce_rate = False
    token = next(t for t, team in slack_api.teams.items() if team.team_id == "T1")
    client = AsyncWebClient(token=token, base_url=slack_api.base_url, retry_handlers=[])
    yield SlackTransport(client, "T1")


@pytest.mark.parametrize("name", ANSWERS)
async def test_telegram_takes_every_answer_as_html(
    name: str, telegram: TelegramTransport, telegram_api: FakeTelegram
) -> None:
    markdown = ANSWERS[name]
    chunks = _chunks(TELEGRAM, markdown)
    route = Route(platform="telegram", workspace_id="acme", conversation_id="1001")
    for index, chunk in enumerate(chunks):
        rendered = TELEGRAM.render(chunk)
        await telegram.send(Post(route, rendered, DeliveryKind.TURN_RESULT, name, index))
    assert telegram_api.refused == [], "Telegram refused the HTML: the plain-text fallback ran"
    sent = telegram_api.sent()
    assert [m["text"] for m in sent] == [TELEGRAM.render(c) for c in chunks]
    assert all(m["parse_mode"] == "HTML" for m in sent)
    shown = [visible_text(m["text"], "HTML") for m in sent]
    _check_what_a_reader_sees(TELEGRAM, markdown, chunks, shown)


@pytest.mark.parametrize("name", ANSWERS)
async def test_slack_takes_every_answer_as_mrkdwn(
    name: str, slack: SlackTransport, slack_api: FakeSlack
) -> None:
    markdown = ANSWERS[name]
    chunks = _chunks(SLACK, markdown)
    route = Route(platform="slack", workspace_id="T1", conversation_id="C1")
    for index, chunk in enumerate(chunks):
        rendered = SLACK.render(chunk)
        await slack.send(Post(route, rendered, DeliveryKind.TURN_RESULT, name, index))
    assert slack_api.refused == []
    posted = [m["text"] for m in slack_api.messages["C1"]]
    assert posted == [SLACK.render(c) for c in chunks]
    _check_what_a_reader_sees(SLACK, markdown, chunks, [slack_shown(t) for t in posted])


def test_the_corpus_covers_every_construct() -> None:
    """Dozens of answers, and each construct the renderers know appears in some of them."""
    assert len(ANSWERS) >= 40
    for name, answer in ANSWERS.items():
        if name.startswith("long-"):  # each needs several messages on both platforms
            assert len(_chunks(TELEGRAM, answer)) > 1 and len(_chunks(SLACK, answer)) > 1, name
    joined = "\n".join(ANSWERS.values())
    for construct in ("# ", "**", "~~", "```", "~~~", "    $", "1. ", "> ", "](", "![", "|--"):
        assert construct in joined, construct
