"""The console of replicas on PostgreSQL (issue 42): the active replica serves it, while a
session's turn may run on another replica. Its pages say which replica runs the session and
what the turn does there, and its Stop button stops it there."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from tests.adapters.replicas.conftest import runs_no_session
from tests.admin.harness import ACME_TOKEN, AdminClient, start_console
from tests.admin.test_workspace_pages import ALICE, acme_session, cell
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology


@pytest.fixture
async def replicas(
    tmp_path: Path,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[Topology]:
    topology = Topology("replicas", tmp_path)
    await start_console(db_path, anthropic_api, telegram_api, slack_api, topology=topology)
    yield topology
    await topology.stop()


async def test_the_console_shows_and_stops_a_turn_running_on_another_replica(
    replicas: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    active, other = replicas.apps
    runs_no_session(active)  # the turn runs on the other replica; the active serves pages
    hold = asyncio.Event()
    anthropic_api.script = [text("Deployed.", hold=hold)]
    telegram_api.push_message("deploy the release", user=ALICE)
    await until(lambda: bool(anthropic_api.requests) and running(other))
    session_id = acme_session(active)
    async with AdminClient(active) as client:
        await client.login(ACME_TOKEN)
        status, html = await client.get(f"/admin/w/acme/sessions/{session_id}")
        assert status == 200
        assert cell(html, "replica") == f"runs on {other.replica}"
        assert cell(html, "doing").startswith("thinking"), cell(html, "doing")
        assert 'class="danger" id="stop">Stop' in html, "Stop pressable while it runs"
        status, html = await client.post(f"/admin/w/acme/sessions/{session_id}", {"action": "stop"})
        assert status == 200 and '<p class="flash" role="status">Stopped the turn run_' in html
    await until(lambda: not running(other))
    await until(lambda: "Stopped from the admin console by acme/lead." in telegram_api.chat(ALICE))
    assert "Deployed." not in telegram_api.chat(ALICE)
    hold.set()


def running(app: App) -> bool:
    return any(s.running for s in app.runtime.sessions.values())
