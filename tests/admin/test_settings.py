"""A workspace's settings edited in the console: written into the config file (the admin's
comments kept), applied to that workspace only; a refused edit leaves file and config as
they were. Over real HTTP against the running App, as an admin's browser comes."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from tests.adapters.slack_harness import BOB, GLOBEX_SECRET, SlackSide
from tests.adapters.telegram_harness import replies
from tests.admin.forms import form_fields
from tests.admin.harness import ACME_TOKEN, GLOBAL_TOKEN, AdminClient, start_console
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

PAGE = "/admin/w/acme/config"
COMMENT = "# Kept by the admin: who to call when the bot is down.\n"


@pytest.fixture
async def app(
    console_topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    """The console on each topology that serves it (`tests/topology.py`)."""
    app = await start_console(
        db_path, anthropic_api, telegram_api, slack_api, topology=console_topology
    )
    assert app.path is not None
    app.path.write_text(COMMENT + app.path.read_text())
    yield app
    await console_topology.stop()  # while the fakes still answer


async def test_an_admin_adds_an_operator_who_is_then_heard(
    app: App,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert app.path is not None
    globex_team = app.live.bots("slack")["globex"]
    anthropic_api.responder = lambda body: text("hello carol")
    async with AdminClient(app) as admin:
        await admin.login(ACME_TOKEN)
        status, page = await admin.get(PAGE)
        assert status == 200
        fields = form_fields(page, PAGE)
        assert fields["op-0-id"] == "alice" and fields["primary"] == "0"
        fields.update({"op-new-id": "carol", "op-new-telegram_user_id": "3003"})
        with caplog.at_level(logging.INFO, logger="adapters.admin.pages.settings"):
            status, page = await admin.post(PAGE, fields, csrf=False)
        assert status == 200, page
        assert "workspaces changed: acme" in page
    saved = app.path.read_text()
    assert saved.startswith(COMMENT), "the admin's comment stays"
    assert '"carol"' in saved and "3003" in saved
    assert app.live.bots("slack")["globex"] is globex_team, "the other workspace was not touched"
    [audit] = [r for r in caplog.records if r.getMessage() == "admin changed the config"]
    assert (audit.admin, audit.workspace, audit.action) == ("acme/lead", "acme", "edit_config")  # type: ignore[attr-defined]
    async with AdminClient(app) as admin:
        await admin.login(ACME_TOKEN)
        _, overview = await admin.get("/admin/w/acme/")
    [shown] = re.findall(r'<li data-action="edit_config">([^<]*)</li>', overview)
    assert "acme/lead" in shown and "workspaces changed: acme" in shown, "in the audit"
    telegram_api.push_message("hi, I am new", user=3003)
    await until(lambda: bool(replies(telegram_api, 3003)))
    assert [m["text"] for m in replies(telegram_api, 3003)] == ["hello carol"]


async def test_an_edit_that_does_not_validate_changes_nothing(
    app: App, telegram_api: FakeTelegram
) -> None:
    assert app.path is not None
    before_file, before_config = app.path.read_text(), app.config
    async with AdminClient(app) as admin:
        await admin.login(GLOBAL_TOKEN)
        _, page = await admin.get(PAGE)
        fields = form_fields(page, PAGE)
        del fields["primary"]  # no primary operator left
        status, page = await admin.post(PAGE, fields, csrf=False)
        assert status == 400
        assert "exactly one operator must have primary = true" in page
        assert "the running config stays" in page

        fields = form_fields(page, PAGE)
        fields["op-0-telegram_user_id"] = "alice"
        status, page = await admin.post(PAGE, fields, csrf=False)
        assert status == 400 and "a Telegram user id is a number" in page
    assert app.path.read_text() == before_file and app.config is before_config


async def test_the_page_never_shows_a_secret(app: App, telegram_api: FakeTelegram) -> None:
    async with AdminClient(app) as admin:
        await admin.login(GLOBAL_TOKEN)
        pages = [(await admin.get(f"/admin/w/{w}/config"))[1] for w in ("acme", "globex")]
    secrets = app.config.secret_values()
    assert secrets and telegram_api.token in secrets
    for page in pages:
        assert "••••••••" in page
        assert not [s for s in secrets if s in page]


async def test_only_the_global_admin_reloads_the_file(app: App) -> None:
    async with AdminClient(app) as admin:
        await admin.login(ACME_TOKEN)
        await admin.get(PAGE)
        status, _ = await admin.post("/admin/reload")
        assert status == 403
    async with AdminClient(app) as admin:
        await admin.login(GLOBAL_TOKEN)
        _, page = await admin.get(PAGE)
        assert 'action="/admin/reload"' in page
        status, page = await admin.post("/admin/reload")
        assert status == 200 and "no workspace changed" in page
        assert app.path is not None
        app.path.write_text(app.path.read_text().replace('default_agent = "assistant"', "", 1))
        status, page = await admin.post("/admin/reload")
        assert status == 400 and "default_agent" in page and "running config stays" in page


async def test_a_form_from_before_another_change_is_refused(app: App) -> None:
    async with AdminClient(app) as admin:
        await admin.login(GLOBAL_TOKEN)
        _, page = await admin.get(PAGE)
        stale = form_fields(page, PAGE)
        fields = {**stale, "queue_mode": "followup"}
        status, _ = await admin.post(PAGE, fields, csrf=False)
        assert status == 200 and app.config.workspaces[0].queue_mode == "followup"
        status, page = await admin.post(PAGE, {**stale, "queue_mode": "collect"}, csrf=False)
        assert status == 400 and "changed since this page was loaded" in page
    assert app.config.workspaces[0].queue_mode == "followup"


async def test_a_slack_workspace_allowed_a_new_channel_answers_there(
    app: App, anthropic_api: FakeAnthropic, slack_api: FakeSlack, telegram_api: FakeTelegram
) -> None:
    acme_bot = app.live.bots("telegram")["acme"]
    anthropic_api.responder = lambda body: text("hello bob")
    async with AdminClient(app) as admin:
        await admin.login(GLOBAL_TOKEN)
        _, page = await admin.get("/admin/w/globex/config")
        fields = form_fields(page, "/admin/w/globex/config")
        assert fields["slack_channels"] == ""
        fields["slack_channels"] = "CNEW"
        status, page = await admin.post("/admin/w/globex/config", fields, csrf=False)
        assert status == 200 and "workspaces changed: globex" in page
    assert app.live.bots("telegram")["acme"] is acme_bot and acme_bot.application.running
    slack = SlackSide(app, slack_api)
    await slack.say("in the new channel", team="T2", secret=GLOBEX_SECRET, user=BOB, channel="CNEW")
    await until(lambda: "hello bob" in slack_api.shown("CNEW"))


async def test_an_edit_over_changes_not_yet_applied_is_refused(app: App) -> None:
    """Someone edited globex in the file without reloading: acme's admin applying acme's
    settings must not put globex's change live under their name."""
    assert app.path is not None
    edited = app.path.read_text().replace('id = "globex"', 'id = "globex"\nqueue_mode = "collect"')
    assert edited != app.path.read_text()
    app.path.write_text(edited)
    async with AdminClient(app) as admin:
        await admin.login(ACME_TOKEN)
        _, page = await admin.get(PAGE)
        fields = form_fields(page, PAGE)
        fields["queue_mode"] = "followup"
        status, page = await admin.post(PAGE, fields, csrf=False)
    assert status == 400, page
    assert "changes not yet applied" in page and "globex" in page
    assert app.path.read_text() == edited, "the file as it was"
    acme, globex = app.config.workspaces
    assert (acme.queue_mode, globex.queue_mode) == ("steer", "steer"), "nothing applied"


async def test_a_form_submitted_twice_at_once_applies_once(app: App) -> None:
    """Two submits of one form (two tabs), the second while the first applies: it was loaded
    before that change, so it is refused rather than applied over it."""
    async with AdminClient(app) as admin:
        await admin.login(ACME_TOKEN)
        _, page = await admin.get(PAGE)
        fields = form_fields(page, PAGE)
        carol = {**fields, "op-new-id": "carol", "op-new-telegram_user_id": "3003"}
        dave = {**fields, "op-new-id": "dave", "op-new-telegram_user_id": "4004"}
        first, second = await asyncio.gather(
            admin.post(PAGE, carol, csrf=False), admin.post(PAGE, dave, csrf=False)
        )
    assert sorted(s for s, _ in (first, second)) == [200, 400]
    [acme] = [w for w in app.config.workspaces if w.id == "acme"]
    assert len([o for o in acme.operators if o.id in ("carol", "dave")]) == 1, "one of them"
