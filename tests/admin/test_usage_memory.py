"""What memory costs, shown apart (issue 40, must-have 8): Alice tells the agent a fact in her
Telegram DM and talks on until the conversation is summarized, which first asks the model to
keep what should last (a flush: model calls of their own). Then /usage in her chat, the
console's Usage page (over real HTTP, on each console topology) and `switchboard usage` show
this month's memory and compaction apart from the total, each what the store's rows of that
purpose add up to."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.server.app import App
from adapters.server.usage_view import spend_cells
from bridge.spend.chat import spend_line
from bridge.spend.words import money
from runtime.providers.base import Usage
from runtime.spend import Spend
from tests.adapters.cli_process import run_to_end
from tests.adapters.telegram_harness import ALICE
from tests.admin.harness import ACME_ADMIN, ACME_TOKEN, GLOBAL_TOKEN, AdminClient
from tests.admin.page_parts import cell, row
from tests.admin.usage_config import PRICE
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.runtime.test_memory_flush import FILLER, Model
from tests.topology import Topology

OPERATOR = int(ALICE["telegram_user_id"])


@pytest.fixture
async def app(
    console_topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    bot = {"bot_token": telegram_api.token, "api_base_url": telegram_api.base_url}
    acme = workspace("acme", [ALICE], telegram=bot)
    provider = {
        **anthropic(anthropic_api.url),
        "prices": {"claude-test-model": PRICE},
        "context_window": 1_024,  # the least there is: summarized after a few messages
        "max_tokens": 100,
    }
    path = write_config(
        console_topology.folder / "switchboard.toml",
        db=console_topology.db,
        provider=provider,
        admin={"token": GLOBAL_TOKEN},
        workspaces=[{**acme, "admins": [ACME_ADMIN]}],
    )
    yield await console_topology.start(path)
    await console_topology.stop()  # while the fakes still answer


async def spent_on(app: App, purpose: str) -> Spend:
    """What the store's calls of `purpose` add up to."""
    [r] = await app.runtime.store.read_sql(
        "SELECT COALESCE(SUM(input_tokens), 0) AS i, COALESCE(SUM(output_tokens), 0) AS o,"
        " COALESCE(SUM(cache_read_tokens), 0) AS cr, COALESCE(SUM(cache_write_tokens), 0) AS cw,"
        " COALESCE(SUM(cost_usd), 0) AS cost, COUNT(*) AS calls FROM model_usage"
        " WHERE purpose = ?",
        (purpose,),
    )
    usage = Usage(int(r["i"]), int(r["o"]), int(r["cr"]), int(r["cw"]))
    return Spend(usage, float(r["cost"]), int(r["calls"]))


def said(telegram: FakeTelegram, start: str) -> list[str]:
    return [t for t in telegram.chat(OPERATOR) if t.startswith(start)]


async def test_usage_shows_what_memory_and_compaction_cost_apart(
    app: App,
    console_topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    anthropic_api.responder = Model()
    words = "Remember: our deploy window is Tuesdays 14:00 UTC. " + FILLER
    for n in range(40):  # until the conversation is long enough to be summarized in a turn
        telegram_api.push_message(words, user=OPERATOR)
        await until(lambda n=n: len(said(telegram_api, "Noted.")) == n + 1, wait_s=20)
        if (await spent_on(app, "compaction")).calls:
            break
        words = f"Message {n}. {FILLER}"
    await app.bridge.settle()
    memory, compaction = await spent_on(app, "memory_flush"), await spent_on(app, "compaction")
    assert compaction.calls == 1, "summarized once"
    assert memory.calls >= 1 and memory.cost_usd > 0, "the flush's calls are recorded, priced"
    telegram_api.push_message("/usage", user=OPERATOR)
    await until(lambda: bool(said(telegram_api, "Spend in workspace acme")), wait_s=20)
    [usage] = said(telegram_api, "Spend in workspace acme")
    lines = [line.strip() for line in usage.splitlines()]
    at = lines.index(next(line for line in lines if line.startswith("This month: ")))
    assert lines[at + 1 : at + 3] == [
        f"of which memory: {spend_line(memory)}",
        f"of which compaction: {spend_line(compaction)}",
    ], usage

    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        status, html = await client.get("/admin/w/acme/usage")
    assert status == 200
    for what, spend in (("memory", memory), ("compaction", compaction)):
        shown = row(html, "data-apart", what)
        assert f"of which {what}" in shown
        expected: dict[str, Any] = {
            "cost": money(spend.cost_usd),
            "in": f"{spend.usage.request_tokens:,}",
            "out": f"{spend.usage.output_tokens:,}",
            "calls": f"{spend.calls:,}",
        }
        assert {field: cell(shown, field).strip() for field in expected} == expected, what

    config = console_topology.folder / "switchboard.toml"
    code, out = await run_to_end("usage", "--config", config, "--days", "0")
    assert code == 0, out
    for what, spend in (("memory", memory), ("compaction", compaction)):
        [line] = [ln for ln in out.splitlines() if ln.strip().startswith(f"of which {what}  ")]
        assert line.split()[-5:] == list(spend_cells(spend)), out
