"""The console's Usage page over real HTTP against the running App, on each console topology:
acme has a daily budget of 1,000 tokens and a priced model. Alice's turn calls a tool each
round until the budget holds it before a model call; the page lists the held turn with why,
and the budget with its share; the admin's Approve spend lets that turn finish, the chat is
told who let it go on, and the action is in the audit of admin actions. The day's dollars and
tokens on the page are what the store holds, and what the fake API reported. An admin of
another workspace neither sees the page nor approves from it; a forged form, an unknown
session and a turn no longer held change nothing; a workspace with no calls and no budgets
says so, its chart still thirty days."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.server.app import App
from bridge.spend.words import money
from tests.adapters.telegram_harness import ALICE
from tests.admin.harness import ACME_TOKEN, GLOBAL_TOKEN, GLOBEX_TOKEN, AdminClient
from tests.admin.page_parts import cell, flash, row
from tests.admin.usage_config import DAILY_TOKENS, PRICE, usage_config
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

OPERATOR = int(ALICE["telegram_user_id"])
PAGE = "/admin/w/acme/usage"
DONE = "The queue is empty."


@pytest.fixture
async def app(
    console_topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    path = usage_config(console_topology, anthropic_api, telegram_api, slack_api, [DAILY_TOKENS])
    yield await console_topology.start(path)
    await console_topology.stop()  # while the fakes still answer


def numbers(html: str, field: str) -> str:
    return cell(html, field).strip()


async def stored(app: App) -> dict[str, Any]:
    [sums] = await app.runtime.store.read_sql(
        "SELECT SUM(input_tokens + cache_read_tokens + cache_write_tokens) AS tokens_in,"
        " SUM(cache_read_tokens + cache_write_tokens) AS cached, SUM(output_tokens) AS out,"
        " SUM(cost_usd) AS cost, COUNT(*) AS calls FROM model_usage"
    )
    return dict(sums)


def reported_cost(anthropic_api: FakeAnthropic) -> float:
    """Dollars for what the fake API said each answer used, at the configured price."""
    per_million = sum(
        u["input_tokens"] * PRICE["input"]
        + u["output_tokens"] * PRICE["output"]
        + u["cache_creation_input_tokens"] * PRICE["input"] * 1.25
        + u["cache_read_input_tokens"] * PRICE["input"] * 0.1
        for u in anthropic_api.usages
    )
    return per_million / 1_000_000


async def test_a_held_turn_is_approved_from_the_page_and_the_day_adds_up(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    approved = False

    def answer(body: dict[str, Any]) -> Reply:
        """A tool call each round (each a little different: no loop to stop) until approved."""
        if approved:
            return text(DONE)
        return tools(("sleep", {"seconds": len(body["messages"]) / 1000}))

    anthropic_api.responder = answer
    telegram_api.push_message("check the queue until it is empty", user=OPERATOR)
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        await until(lambda: bool(app.runtime.sessions), wait_s=20)
        [session_id] = [s.id for s in app.runtime.sessions.values()]
        await until(lambda: app.runtime.held.of(session_id) is not None, wait_s=20)
        status, html = await client.get(PAGE)
        assert status == 200
        assert '<a href="/admin/w/acme/usage" aria-current="page">Usage</a>' in html
        held = row(html, "data-session", session_id)
        assert cell(held, "agent") == "assistant"
        assert cell(held, "conversation") == f"Telegram, DM with user{OPERATOR}"
        assert f'href="/admin/w/acme/sessions/{session_id}"' in held
        assert cell(held, "reason").startswith(
            "it would pass the workspace&#39;s daily budget of 1,000 tokens"
        )
        assert 'value="approve">Approve spend</button>' in held
        budget = row(html, "data-budget", "workspace/day")
        assert cell(budget, "budget") == "The workspace&#39;s daily budget"
        sums = await stored(app)
        spent = sums["tokens_in"] + sums["out"]
        assert cell(budget, "used") == f"{spent:,} tokens"
        assert cell(budget, "limit") == "1,000 tokens"
        assert f"{spent / 1000:.0%}" in cell(budget, "share") and "<meter" in budget
        assert re.fullmatch(r"\d{4}-\d\d-\d\d 00:00 UTC \(in \d.*\)", cell(budget, "renews"))

        approved = True
        status, html = await client.post(f"{PAGE}/held/{session_id}", {"action": "approve"})
        assert flash(html) == (
            "Approved: assistant's turn goes on past its budget, for one more step of it "
            "(this turn only); past that it waits again."
        )
        await until(lambda: DONE in telegram_api.chat(OPERATOR), wait_s=20)
        chat = telegram_api.chat(OPERATOR)
        assert "Going on: admin acme/lead approved the spend for this turn." in chat
        status, html = await client.post(f"{PAGE}/held/{session_id}", {"action": "approve"})
        assert flash(html) == (
            "Not done: this session's turn no longer waits on a budget (it went on, or ended)."
        )
        assert 'id="no-held"' in html

        sums = await stored(app)
        assert sums["calls"] == len(anthropic_api.usages) >= 2
        assert sums["tokens_in"] == sum(
            u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
            for u in anthropic_api.usages
        )
        assert sums["out"] == sum(u["output_tokens"] for u in anthropic_api.usages)
        assert money(sums["cost"]) == money(reported_cost(anthropic_api)) != "$0.00"
        for period in ("today", "month"):
            totals = row(html, "data-period", period)
            assert numbers(totals, "cost") == money(sums["cost"])
            assert numbers(totals, "in") == f"{sums['tokens_in']:,}"
            assert numbers(totals, "cached") == f"{sums['cached']:,}"
            assert numbers(totals, "out") == f"{sums['out']:,}"
            assert numbers(totals, "calls") == str(sums["calls"])
        assert numbers(row(html, "data-name", "assistant"), "cost") == money(sums["cost"])
        assert numbers(row(html, "data-name", "alice"), "calls") == str(sums["calls"])
        assert 'id="no-schedule-spend"' in html
        session = row(html, "data-session", session_id)
        assert cell(session, "name") == f"Telegram, DM with user{OPERATOR} \u00b7 assistant"
        assert html.count('class="bar"') == 30

        _, overview = await client.get("/admin/w/acme/")
        assert '<li data-action="approve_spend">' in overview
        _, audit = await client.get(f"/admin/w/acme/sessions/{session_id}/audit")
        assert (
            "admin acme/lead approved the spend of the held turn (it would pass the workspace"
            in audit
        )


async def test_other_admins_forged_forms_and_an_empty_workspace(app: App) -> None:
    async with AdminClient(app) as other:
        await other.login(GLOBEX_TOKEN)
        status, said = await other.get(PAGE)
        assert status == 403 and said == "globex/boss may not see workspace acme"
        status, said = await other.post(f"{PAGE}/held/anything", {"action": "approve"})
        assert status == 403 and said == "globex/boss may not see workspace acme"
        status, html = await other.get("/admin/w/globex/usage")
        assert status == 200 and "Approve spend" not in html
    async with AdminClient(app) as client:
        await client.login(GLOBAL_TOKEN)
        status, html = await client.get("/admin/w/globex/usage")
        assert status == 200
        assert '<p class="muted" id="no-calls">No model calls yet this month.</p>' in html
        assert (
            "No budgets: set them under <code>[[workspaces.budgets]]</code> in the config." in html
        )
        assert "No turn is waiting on a budget." in html
        assert html.count('class="bar"') == 30 and "No model calls in these days" in html
        assert numbers(row(html, "data-period", "today"), "cost") == "$0.00"
        status, said = await client.post(f"{PAGE}/held/ses_nope", {"action": "approve"})
        assert status == 404 and said == "workspace acme has no session ses_nope"
        status, _ = await client.post(f"{PAGE}/held/ses_nope", {"action": "deny"})
        assert status == 400
        status, _ = await client.post(f"{PAGE}/held/ses_nope", {"action": "approve", "csrf": "x"})
        assert status == 403, "a form that is not the page's"
