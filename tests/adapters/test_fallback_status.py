"""What an operator and a Prometheus server are told when a session falls back (issue 41):
`/status` in the Telegram chat names the model the session is on and why the first is not
used (rate limited, until when in the workspace's timezone, its last failure), and says
nothing of it while the first answers; GET /metrics shows each candidate's state, when it is
back, the switch and the session on the fallback, never a key."""

from __future__ import annotations

import math
import time
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bridge import texts
from tests.adapters.fallback_scene import (
    BACKUP,
    PRIMARY,
    RATE_LIMITED_FOR_S,
    TIMEZONE,
    fall_back,
    start_scene,
)
from tests.adapters.test_metrics import scrape, value
from tests.adapters.test_status_words import status_of
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

AGENT = "acme/assistant"


def tokyo(wall: float) -> str:
    return f"{datetime.fromtimestamp(wall, ZoneInfo(TIMEZONE)):%H:%M} {TIMEZONE}"


async def test_status_names_the_fallback_and_why_the_first_is_not_used(
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    aiohttp_server: Any,
) -> None:
    scene = await start_scene(topology, anthropic_api, telegram_api, aiohttp_server)
    assert await scene.ask("Hello?") == "From the first."
    on_primary = await status_of(scene.app, telegram_api)
    assert "Model:" not in on_primary and "fallback" not in on_primary, on_primary

    scene.primary.limited = True
    limited_at = time.time()
    assert await scene.ask("Still there?") == "From the backup."
    status = await status_of(scene.app, telegram_api)

    [line] = [s for s in status.split("\n") if s.startswith("Model:")]
    assert line.startswith(f"Model: {BACKUP}, a fallback: {PRIMARY} is rate limited until "), status
    back = {tokyo(limited_at + RATE_LIMITED_FOR_S + d) for d in (0, 30)}
    assert any(f"until {b} (in 10 min);" in line for b in back), (line, back)
    assert line.endswith(
        "; last failure: Anthropic API 429 rate_limit_error: Number of requests exceeded."
    ), line


@pytest.fixture
def metrics_topology(console_topology: Topology) -> Topology:
    """Where the port's /metrics is the process that runs the turns (not a standby's)."""
    return console_topology


async def test_metrics_show_the_fallback_as_it_stands_at_the_scrape(
    metrics_topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    aiohttp_server: Any,
) -> None:
    scene = await start_scene(metrics_topology, anthropic_api, telegram_api, aiohttp_server)
    assert await scene.ask("Hello?") == "From the first."
    before = await scrape(scene.app)
    state = "switchboard_provider_state"
    assert value(before, state, agent=AGENT, candidate=PRIMARY, state="ready") == 1
    assert value(before, state, agent=AGENT, candidate=PRIMARY, state="cooling") == 0
    assert value(before, "switchboard_sessions_on_fallback", agent=AGENT, candidate=BACKUP) == 0
    assert "switchboard_provider_switches_total" not in before

    scene.primary.limited = True
    assert await scene.ask("Still there?") == "From the backup."
    after = await scrape(scene.app)

    assert value(after, state, agent=AGENT, candidate=PRIMARY, state="cooling") == 1
    assert value(after, state, agent=AGENT, candidate=PRIMARY, state="ready") == 0
    assert value(after, state, agent=AGENT, candidate=BACKUP, state="ready") == 1
    back_in = value(after, "switchboard_provider_back_in_seconds", candidate=PRIMARY)
    assert back_in is not None and RATE_LIMITED_FOR_S - 60 < back_in <= RATE_LIMITED_FOR_S
    assert value(after, "switchboard_provider_back_in_seconds", candidate=BACKUP) == 0
    switches = "switchboard_provider_switches_total"
    labels = {"agent": AGENT, "from": PRIMARY, "to": BACKUP, "why": "rate_limited"}
    assert value(after, switches, **labels) == 1
    assert value(after, "switchboard_sessions_on_fallback", agent=AGENT, candidate=BACKUP) == 1
    every_label = {
        v for samples in after.values() for labels, _ in samples for v in labels.values()
    }
    assert "test-key" not in every_label, "no key in a label"


async def test_a_refused_key_is_named_until_a_reload(
    metrics_topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    aiohttp_server: Any,
) -> None:
    scene = await start_scene(metrics_topology, anthropic_api, telegram_api, aiohttp_server)
    scene.primary.refuses_key = True
    await fall_back(scene)

    status = await status_of(scene.app, telegram_api)
    metrics = await scrape(scene.app)

    assert (
        f"Model: {BACKUP}, a fallback: {PRIMARY} refused its key (until the config is "
        "reloaded); last failure: Anthropic API 401 authentication_error: invalid x-api-key."
    ) in status.split("\n"), status
    state = "switchboard_provider_state"
    assert value(metrics, state, agent=AGENT, candidate=PRIMARY, state="disabled") == 1
    back_in = value(metrics, "switchboard_provider_back_in_seconds", candidate=PRIMARY)
    assert back_in == math.inf, "only a reload brings it back"
    labels = {"agent": AGENT, "from": PRIMARY, "to": BACKUP, "why": "auth"}
    assert value(metrics, "switchboard_provider_switches_total", **labels) == 1
    refused = texts.PROVIDER_REFUSED.format(
        provider=PRIMARY, why="Anthropic API 401 authentication_error: invalid x-api-key"
    )
    await until(lambda: refused in telegram_api.chat(1001), 20)
    assert telegram_api.chat(1001).count(refused) == 1, "the primary operator is told once"
