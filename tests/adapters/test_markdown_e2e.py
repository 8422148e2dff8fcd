"""A model's markdown answer through the whole App, as an operator receives it: a code review
with a heading, a list, a quote and a table, then a code block too long for one message."""

from __future__ import annotations

import math
from pathlib import Path

from adapters.slack.platform import SLACK
from adapters.telegram.platform import TELEGRAM
from tests.adapters import slack_harness, telegram_harness
from tests.adapters.markdown_view import slack_shown
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.telegram_spec import visible_text
from tests.runtime.helpers import until

REVIEW = (Path(__file__).parent / "markdown_corpus/code_review.md").read_text()
CODE = [f"    total_{i} = price[{i}] * qty.get('<{i}>', 0)  # a < b && c > d" for i in range(90)]
ANSWER = f"{REVIEW}\nThe whole module:\n\n```python\ndef compute():\n" + "\n".join(CODE) + "\n```\n"


def _code_lines(shown: list[str]) -> list[str]:
    return [line for message in shown for line in message.split("\n") if "total_" in line]


async def test_telegram_operator_reads_the_review_and_all_the_code(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await telegram_harness.start_app(db_path, anthropic_api, telegram_api)
    try:
        anthropic_api.script = [text(ANSWER)]
        telegram_api.push_message("review parser.py", user=1001)
        await until(lambda: len(_code_lines(_tg_shown(telegram_api))) == 90, wait_s=20)
    finally:
        await app.stop()
    messages = telegram_harness.replies(telegram_api, 1001)
    assert telegram_api.refused == [], "no entity refused, so no plain-text fallback"
    assert len(messages) > 1 and all(m["parse_mode"] == "HTML" for m in messages)
    assert len(messages) <= math.ceil(len(TELEGRAM.render(ANSWER)) / 4096) + 1
    shown = _tg_shown(telegram_api)
    assert shown[0].startswith("Review of parser.py\n\nOverall: solid, two bugs.")
    assert "1. Off-by-one in tokenize()" in shown[0] and "Nit: _is_ok" in shown[0]
    assert "parser.py |   212 | changes needed" in shown[0], "a table, aligned"
    assert _code_lines(shown) == CODE, "the code arrives verbatim, in order, none lost"
    assert all(m["text"].count("<pre>") == m["text"].count("</pre>") for m in messages)


def _tg_shown(telegram_api: FakeTelegram) -> list[str]:
    return [visible_text(m["text"], "HTML") for m in telegram_harness.replies(telegram_api, 1001)]


async def test_slack_operator_reads_the_review_and_all_the_code(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    app = await slack_harness.start_app(db_path, anthropic_api, slack_api)
    try:
        anthropic_api.script = [text(ANSWER)]
        await slack_harness.SlackSide(app, slack_api).say("review parser.py", channel="DALICE")
        await until(lambda: len(_code_lines(_slack_shown(slack_api))) == 90, wait_s=20)
    finally:
        await app.stop()
    assert slack_api.refused == []
    posts = [p["text"] for p in slack_api.posts("DALICE")]
    assert len(posts) > 1 and all(len(p) <= 3900 for p in posts)
    assert len(posts) <= math.ceil(len(SLACK.render(ANSWER)) / 3900) + 1
    shown = _slack_shown(slack_api)
    assert shown[0].startswith("*Review of `parser.py`*\n\n*Overall:* solid, two bugs.")
    assert _code_lines(shown) == CODE
    assert all(p.count("```") % 2 == 0 for p in posts), "every code block closed in its message"


def _slack_shown(slack_api: FakeSlack) -> list[str]:
    return [slack_shown(p["text"]) for p in slack_api.posts("DALICE")]
