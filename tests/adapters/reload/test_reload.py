"""A config reload in a running App: the workspaces it changes restart, the others never
notice; a config that does not validate is refused and the running one stays."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from adapters.server.app import App
from bridge.types import DeliveryStatus
from runtime.messages import QueueStatus
from tests.adapters.reload.harness import CAROL, edit
from tests.adapters.telegram_harness import replies
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until


def prompt_of(body: dict[str, Any]) -> str:
    return str(body["messages"])


async def test_a_changed_workspace_restarts_while_a_turn_in_another_runs_on(
    app: App,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    beta_api: FakeTelegram,
) -> None:
    beta_turn, acme_turn = asyncio.Event(), asyncio.Event()
    asked: list[str] = []

    def respond(body: dict[str, Any]) -> Reply:
        asked.append(prompt_of(body))
        if "long job" in asked[-1] and len(body["messages"]) == 1:
            return text("beta done", hold=beta_turn)
        if "acme job" in asked[-1] and len(body["messages"]) == 1:
            return text("acme first round", hold=acme_turn)
        return text("reply")

    anthropic_api.responder = respond
    beta_bot, acme_bot = app.live.bots("telegram")["beta"], app.live.bots("telegram")["acme"]
    beta_api.push_message("long job", user=2002)
    telegram_api.push_message("acme job", user=1001)
    await until(lambda: sum("job" in a for a in asked) == 2)
    telegram_api.push_message("and one more thing", user=1001)  # waits in acme's queue
    for _ in range(1000):
        queued = await app.runtime.store.messages(statuses=[QueueStatus.QUEUED])
        if queued:
            break
        await asyncio.sleep(0.01)
    assert [m.message.text for m in queued] == ["and one more thing"]

    edit(app, "[[workspaces.agents]]", CAROL + "[[workspaces.agents]]")  # acme's first
    report = await app.reload()

    assert report.ok, report.errors
    assert (report.changed, report.added, report.removed) == (("acme",), (), ())
    assert report.restart_needed == ()
    assert app.live.bots("telegram")["beta"] is beta_bot, "beta was not touched"
    assert beta_bot.application.running
    assert app.live.bots("telegram")["acme"] is not acme_bot and not acme_bot.application.running
    running = [app.runtime.status(s) for s in app.runtime.sessions]
    assert all(s.state == "running" for s in running), "both turns still run"

    beta_turn.set()
    acme_turn.set()
    await until(lambda: bool(replies(beta_api, 2002)))
    assert [m["text"] for m in replies(beta_api, 2002)] == ["beta done"]
    await until(lambda: len(replies(telegram_api, 1001)) >= 1)
    telegram_api.push_message("hello from carol", user=3003)  # the new operator is heard
    await until(lambda: bool(replies(telegram_api, 3003)))
    assert [m["text"] for m in replies(telegram_api, 3003)] == ["reply"]
    await app.bridge.settle()
    texts = {m.message.text: m.status for m in await app.runtime.store.messages()}
    assert texts["and one more thing"] in (QueueStatus.INTERJECTED, QueueStatus.PROCESSED)
    intents = await app.bridge.store.intents()
    assert {i.status for i in intents} == {DeliveryStatus.ACCEPTED_BY_TRANSPORT}


async def test_a_reply_pending_across_the_restart_is_delivered_after_it(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    reply_only = {"when": lambda params: "reply_markup" not in params}  # not the Stop button's
    telegram_api.fail("sendMessage", 502, "Bad Gateway", **reply_only)  # tried again later
    telegram_api.push_message("hi", user=1001)

    async def intent_holds(condition: Callable[[Any], bool]) -> bool:
        for _ in range(2000):
            intents = await app.bridge.store.intents()
            if intents and condition(intents[0]):
                return True
            await asyncio.sleep(0.005)
        return False

    open_statuses = (DeliveryStatus.PENDING, DeliveryStatus.SENDING)
    assert await intent_holds(lambda i: i.attempts == 1 and i.status in open_statuses)
    started = telegram_api.gate("getMe")  # the restarted bot's start takes a while
    edit(app, "[[workspaces.agents]]", CAROL + "[[workspaces.agents]]")
    reloading = asyncio.create_task(app.reload())
    assert await intent_holds(lambda i: "restarting" in (i.last_error or "")), "tried meanwhile"
    started.set()
    report = await reloading
    assert report.changed == ("acme",)
    await until(lambda: bool(replies(telegram_api, 1001)))
    await app.bridge.settle()
    [intent] = await app.bridge.store.intents()
    assert intent.status is DeliveryStatus.ACCEPTED_BY_TRANSPORT
    assert intent.attempts == 1, "waiting out the restart spent no attempt (only the 502 did)"


async def test_a_config_that_does_not_validate_is_refused_and_the_running_one_stays(
    app: App, telegram_api: FakeTelegram
) -> None:
    before, bot = app.config, app.live.bots("telegram")["acme"]
    edit(app, 'default_agent = "assistant"', 'default_agent = "nobody"')
    report = await app.reload()
    assert not report.ok
    assert "default_agent (\"acme\"): 'nobody' is not one of the agents" in report.errors
    assert app.config is before and app.live.bots("telegram")["acme"] is bot
    telegram_api.push_message("still here", user=1001)
    await until(lambda: bool(replies(telegram_api, 1001)))


async def test_other_sections_need_a_restart_and_keep_their_running_values(
    app: App, telegram_api: FakeTelegram
) -> None:
    running_queue = app.config.queue
    assert app.path is not None
    app.path.write_text(app.path.read_text() + "\n[queue]\ncap = 7\n")
    report = await app.reload()
    assert report.ok and report.applied == ()
    assert report.restart_needed == ("queue",)
    assert app.config.queue == running_queue
    assert "needs a restart" in "\n".join(report.lines())


async def test_a_removed_workspace_stops_and_an_added_one_starts(
    app: App, beta_api: FakeTelegram, telegram_api: FakeTelegram
) -> None:
    assert app.path is not None
    source = app.path.read_text()
    beta_at = source.index("[[workspaces]]", source.index('id = "acme"'))
    beta_bot = app.live.bots("telegram")["beta"]
    app.path.write_text(source[:beta_at])
    report = await app.reload()
    assert report.removed == ("beta",)
    assert "beta" not in app.live.bots("telegram") and not beta_bot.application.running
    scraped = (await app.bridge.metrics.scrape(app.runtime, app.bridge.store)).decode()
    assert 'workspace="acme"' in scraped and 'workspace="beta"' not in scraped
    beta_api.push_message("anyone?", user=2002)
    app.path.write_text(source)
    report = await app.reload()
    assert report.added == ("beta",)
    await until(lambda: bool(replies(beta_api, 2002)))
    scraped = (await app.bridge.metrics.scrape(app.runtime, app.bridge.store)).decode()
    assert 'switchboard_platform_up{platform="telegram",workspace="beta"} 1.0' in scraped


async def test_a_bot_that_refuses_to_start_is_reported_and_the_others_run_on(
    app: App, beta_api: FakeTelegram, telegram_api: FakeTelegram
) -> None:
    acme_bot = app.live.bots("telegram")["acme"]
    edit(app, beta_api.token, "654321:WRONG")
    report = await app.reload()
    assert report.ok and report.changed == ("beta",)
    assert "workspace beta: Telegram at" in report.errors and "WRONG" not in report.errors
    assert "beta" not in app.live.bots("telegram") and app.live.bots("telegram")["acme"] is acme_bot
    assert report.lines()[-1].startswith("not running (fix it and reload again): workspace beta")
    telegram_api.push_message("still here", user=1001)
    await until(lambda: bool(replies(telegram_api, 1001)))
