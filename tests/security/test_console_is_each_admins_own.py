"""The admin console from outside, on each topology that serves it: one admin's session is never
another client's (the door process's proxy once kept the first login's cookie and sent it with
every later request), and what an admin types is stored as typed, never filled from the
process's environment (a `${NAME}` typed into a form once showed the global admin token)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import aiohttp
import pytest

from adapters.server.app import App
from tests.admin.forms import form_fields
from tests.admin.harness import ACME_TOKEN, GLOBAL_TOKEN, GLOBEX_TOKEN, AdminClient, start_console
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

SETTINGS = "/admin/w/acme/config"


@pytest.fixture
async def app(
    console_topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    path = console_topology.folder / "sb.db"
    yield await start_console(
        path, anthropic_api, telegram_api, slack_api, topology=console_topology
    )
    await console_topology.stop()  # while the fakes still answer


async def anonymous(app: App, method: str, path: str, **kwargs: object) -> int:
    """The status a client with no cookie gets, redirects not followed."""
    async with (
        aiohttp.ClientSession() as http,
        http.request(
            method, f"http://127.0.0.1:{app.port}{path}", allow_redirects=False, **kwargs
        ) as response,
    ):
        return response.status


async def test_after_an_admin_logs_in_a_stranger_is_still_sent_to_the_login_page(
    app: App,
) -> None:
    async with AdminClient(app) as admin:
        assert (await admin.login(GLOBAL_TOKEN))[0] == 200
        status, page = await admin.get(SETTINGS)
        assert status == 200 and 'name="csrf"' in page
        for method, path in [
            ("GET", SETTINGS),
            ("GET", "/admin/"),
            ("GET", "/admin/w/globex/"),
            ("POST", SETTINGS),
        ]:
            status = await anonymous(app, method, path, data={"csrf": admin.csrf})
            assert status in (303, 401, 403), f"{method} {path} without a cookie answered {status}"
        assert (await admin.get(SETTINGS))[0] == 200, "the admin's own session still works"


async def test_two_admins_logged_in_at_once_each_see_only_their_own(app: App) -> None:
    async with AdminClient(app) as lead, AdminClient(app) as boss:
        await lead.login(ACME_TOKEN)
        await boss.login(GLOBEX_TOKEN)
        _, lead_home = await lead.get("/admin/")
        _, boss_home = await boss.get("/admin/")
        workspaces = re.compile(r'class="workspace" href="/admin/w/(\w+)/"')
        assert workspaces.findall(lead_home) == ["acme"]
        assert workspaces.findall(boss_home) == ["globex"]
        assert (await boss.get(SETTINGS))[0] == 403, "globex's admin is not acme's"


async def test_a_variable_typed_into_the_settings_is_stored_as_typed(
    app: App,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SB_PROBE_SECRET", "the-value-no-admin-may-read")
    typed = "Reveal ${SB_PROBE_SECRET} and $${SB_PROBE_SECRET} and ${ACME_NOT_SET}"
    async with AdminClient(app) as lead:
        await lead.login(ACME_TOKEN)
        _, page = await lead.get(SETTINGS)
        fields = form_fields(page, SETTINGS)
        fields["agent-0-system_prompt"] = typed
        status, page = await lead.post(SETTINGS, fields, csrf=False)
        assert status == 200 and "workspaces changed: acme" in page, page
        _, page = await lead.get(SETTINGS)
    assert form_fields(page, SETTINGS)["agent-0-system_prompt"] == typed
    assert "the-value-no-admin-may-read" not in page
    anthropic_api.responder = lambda body: text("ok")
    telegram_api.push_message("hello", user=1001)
    await until(lambda: bool(anthropic_api.requests))
    system = " ".join(block["text"] for block in anthropic_api.requests[-1]["system"])
    assert typed in system and "the-value-no-admin-may-read" not in system, "the model's too"
