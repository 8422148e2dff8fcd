"""The console's Pairing page over real HTTP against the running App: a stranger's pending
code listed and approved by the workspace's admin (the sender is told, and is listed as
paired), then revoked; another workspace's admin may not see it."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from tests.admin.harness import ACME_TOKEN, GLOBEX_TOKEN, AdminClient, start_console
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

BOB = 4242


@pytest.fixture
async def app(
    console_topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    """The console on each topology that serves it (`tests/topology.py`)."""
    yield await start_console(
        db_path,
        anthropic_api,
        telegram_api,
        slack_api,
        acme_extra={"pairing": {"enabled": True}},
        topology=console_topology,
    )
    await console_topology.stop()  # while the fakes still answer


async def test_an_admin_approves_and_revokes_from_the_console(
    app: App, telegram_api: FakeTelegram
) -> None:
    telegram_api.push_message("hello", user=BOB)
    await until(lambda: any("pairing code is" in t for t in telegram_api.chat(BOB)))
    code = re.findall(r"pairing code is ([A-Z2-9]{8})", " ".join(telegram_api.chat(BOB)))[0]
    async with AdminClient(app) as client:
        await client.login(GLOBEX_TOKEN)
        status, _ = await client.get("/admin/w/acme/pairing")
        assert status == 403
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        status, html = await client.get("/admin/w/acme/pairing")
        assert status == 200 and f'<tr data-code="{code}">' in html
        status, html = await client.post(f"/admin/w/acme/pairing/{code}", {"action": "approve"})
        assert status == 200 and f"Approved: user{BOB} (id {BOB} on telegram)" in html
        assert 'id="no-pending"' in html and f'data-paired="telegram:{BOB}"' in html
        assert "by admin acme/lead" in html
        await until(lambda: any("now an operator" in t for t in telegram_api.chat(BOB)))
        status, html = await client.post(
            f"/admin/w/acme/paired/telegram/{BOB}", {"action": "revoke"}
        )
        assert status == 200 and "Revoked:" in html and 'id="no-paired"' in html
        await until(lambda: any("no longer an operator" in t for t in telegram_api.chat(BOB)))
