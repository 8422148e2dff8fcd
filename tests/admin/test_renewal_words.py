"""One way of saying how long (issue 43): the console's Usage page says when a month's budget
renews in the same words chat says it ("in 3 d 23 h"; it said "in 4 days"), over real HTTP
against the running App."""

from __future__ import annotations

import re
from pathlib import Path

from bridge.spend.periods import period_bounds
from bridge.spend.words import until
from config.timing import zone
from tests.admin.harness import ACME_TOKEN, AdminClient, start_console
from tests.admin.page_parts import cell, row
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram

MONTH = {"scope": "workspace", "period": "month", "limit_tokens": 1_000_000}


async def test_the_console_says_a_renewal_as_chat_does(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram, slack_api: FakeSlack
) -> None:
    app = await start_console(
        db_path, anthropic_api, telegram_api, slack_api, acme_extra={"budgets": [MONTH]}
    )
    try:
        async with AdminClient(app) as client:
            await client.login(ACME_TOKEN)
            status, html = await client.get("/admin/w/acme/usage")
        now = app.runtime.clock.wall()
        assert status == 200
        renews = cell(row(html, "data-budget", "workspace/month"), "renews")
        shown = re.fullmatch(r"(\d{4}-\d\d-\d\d \d\d:\d\d \S+) \(in (.+)\)", renews)
        assert shown is not None, renews
        _, end = period_bounds("month", zone("UTC"), now)
        chat = until(end, zone("UTC"), now)  # what chat's /usage and budget notices say
        assert f"(in {shown.group(2)})." in chat, (renews, chat)
        assert "days" not in renews
    finally:
        await app.stop()
