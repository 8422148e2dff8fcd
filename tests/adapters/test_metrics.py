"""GET /metrics over real HTTP after real work: the real App against the loopback fakes of
Telegram, Slack and the model, the body read back with prometheus-client's own parser."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from adapters.server.app import App
from runtime.events import EventType
from tests.adapters import slack_harness, telegram_harness
from tests.adapters.slack_harness import SlackSide
from tests.adapters.telegram_harness import replies
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until, wait_for

Labels = dict[str, str]
Samples = dict[str, list[tuple[Labels, float]]]


def parse(body: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            samples.setdefault(s.name, []).append((dict(s.labels), s.value))
    return samples


def value(samples: Samples, name: str, **labels: str) -> float | None:
    """The sample with exactly these labels, or None when there is none."""
    found = [v for ls, v in samples.get(name, []) if ls == labels]
    assert len(found) <= 1, (name, labels, found)
    return found[0] if found else None


async def scrape(app: App) -> Samples:
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"http://127.0.0.1:{app.port}/metrics") as response,
    ):
        assert response.status == 200
        assert response.headers["Content-Type"] == CONTENT_TYPE_LATEST
        return parse(await response.text())


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    app = await telegram_harness.start_app(db_path, anthropic_api, telegram_api)
    yield app
    await app.stop()


async def test_a_reply_is_counted_and_stamps_the_platform(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    before = await scrape(app)
    assert value(before, "switchboard_platform_up", platform="telegram", workspace="acme") == 1
    last_ok = "switchboard_platform_last_success_timestamp_seconds"
    assert value(before, last_ok, platform="telegram", workspace="acme") is None

    sent_after = time.time()
    telegram_api.push_message("hi", user=1001)
    await until(lambda: bool(replies(telegram_api, 1001)))
    await app.bridge.settle()
    m = await scrape(app)

    counted = "switchboard_messages_in_total"
    assert value(m, counted, workspace="acme", trust="trusted_operator") == 1
    assert value(m, "switchboard_deliveries_total", status="accepted_by_transport") == 1
    assert value(m, "switchboard_turn_duration_seconds_count") == 1
    stamp = value(m, last_ok, platform="telegram", workspace="acme")
    assert stamp is not None and sent_after <= stamp <= time.time()
    assert value(m, "switchboard_turns_running", workspace="acme") == 0
    assert value(m, "switchboard_queue_messages", workspace="acme", status="queued") == 0
    assert value(m, "switchboard_outbox_backlog", **_tg("sending")) == 0
    assert value(m, "switchboard_outbox_oldest_pending_age_seconds", **_tg()) == 0
    for process in ("process_cpu_seconds_total", "process_resident_memory_bytes"):
        assert (value(m, process) or 0) > 0, process
    assert value(m, "process_open_fds") is not None
    assert any(ls.get("implementation") for ls, _ in m["python_info"])


async def test_a_counter_past_a_million_reads_back_exact(app: App) -> None:
    app.bridge.metrics.deliveries.inc(1_000_000, status="accepted_by_transport")
    app.bridge.metrics.deliveries.inc(status="accepted_by_transport")
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"http://127.0.0.1:{app.port}/metrics") as response,
    ):
        body = await response.text()
    [line] = [x for x in body.splitlines() if x.startswith("switchboard_deliveries_total{")]
    assert not line.endswith(" 1e+06"), line  # what the hand-written `:g` printed
    m = parse(body)
    assert value(m, "switchboard_deliveries_total", status="accepted_by_transport") == 1_000_001


async def test_running_turns_and_queue_while_the_model_is_held(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    release = asyncio.Event()
    anthropic_api.script = [text("first", hold=release)]
    telegram_api.push_message("work on this", user=1001)
    await wait_for(app.runtime, EventType.TURN_STARTED)
    await until(lambda: len(anthropic_api.requests) == 1)
    telegram_api.push_message("and also this", user=1001)  # waits for a safe point
    await until(lambda: sum(len(s.queue) for s in app.runtime.sessions.values()) == 1)

    held = await scrape(app)
    assert value(held, "switchboard_turns_running", workspace="acme") == 1
    assert value(held, "switchboard_queue_messages", workspace="acme", status="dequeued") == 1
    assert value(held, "switchboard_queue_messages", workspace="acme", status="queued") == 1

    release.set()
    await app.bridge.settle()
    done = await scrape(app)
    assert value(done, "switchboard_turns_running", workspace="acme") == 0
    assert value(done, "switchboard_queue_messages", workspace="acme", status="dequeued") == 0
    assert value(done, "switchboard_queue_messages", workspace="acme", status="queued") == 0
    assert value(done, "switchboard_interjections_total", boundary="after_provider_round") == 1


async def test_outbox_backlog_and_age_while_telegram_refuses(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    telegram_api.fail(
        "sendMessage",
        429,
        "Too Many Requests: retry after 2",
        retry_after=2,
        when=lambda params: "reply_markup" not in params,  # the reply, not a progress line
    )
    telegram_api.push_message("hi", user=1001)
    await until(lambda: not telegram_api.failures["sendMessage"])  # the reply was refused
    await asyncio.sleep(0.05)

    failing = await scrape(app)
    assert value(failing, "switchboard_outbox_backlog", **_tg("sending")) == 1
    assert value(failing, "switchboard_outbox_backlog", **_tg("pending")) == 0
    age = value(failing, "switchboard_outbox_oldest_pending_age_seconds", **_tg())
    assert age is not None and 0.05 <= age < 5
    assert value(failing, "switchboard_deliveries_total", status="accepted_by_transport") is None

    await until(lambda: bool(replies(telegram_api, 1001)), wait_s=10)  # after the retry
    await app.bridge.settle()
    recovered = await scrape(app)
    assert value(recovered, "switchboard_outbox_backlog", **_tg("sending")) == 0
    assert value(recovered, "switchboard_outbox_oldest_pending_age_seconds", **_tg()) == 0
    assert value(recovered, "switchboard_deliveries_total", status="accepted_by_transport") == 1


async def test_connection_gauge_follows_start_and_stop(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await telegram_harness.start_app(db_path, anthropic_api, telegram_api)
    try:
        started = await scrape(app)
        assert value(started, "switchboard_platform_up", platform="telegram", workspace="acme") == 1
    finally:
        await app.stop()
    # The server is gone with the app: read the registry it served.
    stopped = parse(generate_latest(app.bridge.metrics.registry).decode())
    assert value(stopped, "switchboard_platform_up", platform="telegram", workspace="acme") == 0


async def test_slack_workspace_up_and_stamped_after_a_reply(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    app = await slack_harness.start_app(db_path, anthropic_api, slack_api)
    try:
        slack = SlackSide(app, slack_api)
        await slack.say("hi", channel="DALICE")
        await until(lambda: bool(slack_api.posts("DALICE")))
        await app.bridge.settle()
        m = await scrape(app)
    finally:
        await app.stop()
    assert value(m, "switchboard_platform_up", platform="slack", workspace="acme") == 1
    last_ok = "switchboard_platform_last_success_timestamp_seconds"
    stamp = value(m, last_ok, platform="slack", workspace="acme")
    assert stamp is not None and stamp > time.time() - 60
    counted = "switchboard_messages_in_total"
    assert value(m, counted, workspace="acme", trust="trusted_operator") == 1


def _tg(status: str | None = None) -> Labels:
    labels = {"platform": "telegram", "workspace": "acme"}
    return {**labels, "status": status} if status else labels
