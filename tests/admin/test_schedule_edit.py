"""Schedules edited on the console's Schedules tab, over real HTTP against the running App on
the real clock: a schedule every hour changed to every two seconds runs within seconds, with
its new prompt, with no restart; one added and one removed; a bad value refused in the
config's own words with the file and the running config as they were; a form from before
another change refused; each applied edit in the audit of admin actions."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path

import pytest

from adapters.server.app import App
from tests.admin.forms import form_fields
from tests.admin.harness import ACME_TOKEN, GLOBEX_TOKEN, AdminClient, start_console
from tests.admin.page_parts import cell, flash, row
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

PAGE = "/admin/w/acme/schedules"
EDIT = PAGE + "/tick/edit"
COMMENT = "# Kept by the admin: ask Dana before adding schedules.\n"
TICK = {
    "id": "tick",
    "agent": "assistant",
    "every": "1h",
    "prompt": "Check the queue.",
    "deliver": "silent",  # its answers do not queue up in chat for the App's stop to wait on
}
NEW_PROMPT = "Check the deploy queue; say only what is stuck."


@pytest.fixture
async def app(
    console_topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    """acme has one schedule, every hour; the file starts with the admin's comment."""
    anthropic_api.responder = lambda body: text("Nothing is stuck.")
    app = await start_console(
        db_path,
        anthropic_api,
        telegram_api,
        slack_api,
        acme_extra={"schedules": [TICK]},
        server={"schedule_min_every": "1s"},  # runs within the test's seconds
        topology=console_topology,
    )
    assert app.path is not None
    app.path.write_text(COMMENT + app.path.read_text())
    yield app
    await console_topology.stop()  # while the fakes still answer


def asked(anthropic_api: FakeAnthropic, prompt: str) -> int:
    """How many runs the model was asked `prompt` in."""
    return sum(prompt in json.dumps(r["messages"][-1]) for r in anthropic_api.requests)


async def test_every_hour_changed_to_every_two_seconds_runs_at_once(
    app: App, anthropic_api: FakeAnthropic
) -> None:
    assert app.path is not None
    async with AdminClient(app) as admin:
        await admin.login(ACME_TOKEN)
        _, html = await admin.get(PAGE)
        assert cell(row(html, "data-schedule", "tick"), "prompt") == "Check the queue."
        assert f'href="{EDIT}"' in html
        status, html = await admin.get(EDIT)
        assert status == 200
        fields = form_fields(html, EDIT)
        assert (fields["every"], fields["cron"], fields["timezone"]) == ("1h", "", "UTC")
        assert (fields["agent"], fields["deliver"], fields["enabled"]) == (
            "assistant",
            "silent",
            "1",
        )
        status, html = await admin.post(EDIT, {**fields, "every": "2s", "prompt": NEW_PROMPT})
        assert status == 200, html
        assert flash(html) == ("Schedule tick changed (every, prompt): every 2s, agent assistant.")
        tick = row(html, "data-schedule", "tick")
        assert cell(tick, "timing") == "every 2s" and cell(tick, "prompt") == NEW_PROMPT

        await until(lambda: asked(anthropic_api, NEW_PROMPT) >= 2, wait_s=20)
        _, overview = await admin.get("/admin/w/acme/")
        [action] = re.findall(r'<li data-action="edit_config">([^<]*)</li>', overview)
        assert unescape(action).endswith(
            "acme/lead changed the workspace's settings: schedule tick changed (every, prompt): "
            "every 2s, agent assistant"
        ), "in the audit of admin actions, in words"
    saved = app.path.read_text()
    assert saved.startswith(COMMENT), "the admin's comment stays"
    assert 'every = "2s"' in saved and NEW_PROMPT in saved and '"1h"' not in saved
    assert asked(anthropic_api, "Check the queue.") == 0, "the old schedule never ran"
    assert asked(anthropic_api, "was not running") == 0, "slots from before the edit were owed"


async def test_bad_values_are_refused_and_schedules_are_added_and_removed(app: App) -> None:
    assert app.path is not None
    before_file, before_config = app.path.read_text(), app.config
    async with AdminClient(app) as admin:
        await admin.login(ACME_TOKEN)
        _, html = await admin.get(EDIT)
        fields = form_fields(html, EDIT)
        for change, words in (
            (
                {"every": "", "cron": "0 3 * * *", "active_hours": "08:00-20:00"},
                "schedule 'tick' never fires: no time of cron '0 3 * * *' falls inside its "
                "active_hours '08:00-20:00' in UTC",
            ),
            (
                {"timezone": "Mars/Olympus"},
                "unknown timezone 'Mars/Olympus'; use an IANA name such as UTC or Europe/Berlin",
            ),
            (
                {"cron": "0 9 * * 1-5"},
                "schedule 'tick' needs exactly one of cron, every or at (it has cron and every)",
            ),
        ):
            status, html = await admin.post(EDIT, {**fields, **change})
            assert status == 400, change
            assert "Not saved; the running config stays." in html
            assert words in html.replace("&#39;", "'"), change
            shown = form_fields(html, EDIT)
            assert {k: shown[k] for k in change} == change, "the form as the admin left it"
        assert app.path.read_text() == before_file and app.config is before_config

        _, html = await admin.get(PAGE + "/add")
        form = form_fields(html, PAGE)
        assert (form["agent"], form["timezone"], form["enabled"]) == ("assistant", "UTC", "1")
        nightly = {"id": "nightly", "cron": "0 3 * * *", "prompt": "Rotate the logs."}
        status, html = await admin.post(PAGE, {**form, **nightly, "enabled": ""})
        assert status == 200 and flash(html) == (
            "Schedule nightly added: cron 0 3 * * * (UTC), agent assistant, off."
        )
        assert cell(row(html, "data-schedule", "nightly"), "state") == "off in the config"
        status, html = await admin.post(PAGE, {**form, "id": "other", "every": "1d"})
        assert status == 400, "the page it was added from is stale now"
        assert "the workspace changed since this page was loaded" in html
        _, html = await admin.get(PAGE + "/add")
        form = {**form_fields(html, PAGE), **nightly}
        status, _ = await admin.post(PAGE, {**form, "csrf": "forged"})
        assert status == 403, "a form that is not the page's"
        status, html = await admin.post(PAGE, form)
        assert status == 400 and "schedule id &#39;nightly&#39; is defined twice" in html

        _, html = await admin.get(EDIT)
        removal = form_fields(html, PAGE + "/tick/remove")
        status, html = await admin.post(PAGE + "/tick/remove", removal)
        assert status == 200 and flash(html) == "Schedule tick removed."
        assert 'data-schedule="tick"' not in html and 'data-schedule="nightly"' in html
        status, said = await admin.get(EDIT)
        assert status == 404 and said == "no schedule 'tick' here (schedules: nightly)"
    saved = app.path.read_text()
    assert saved.startswith(COMMENT) and '"tick"' not in saved and '"nightly"' in saved
    [acme] = [w for w in app.config.workspaces if w.id == "acme"]
    assert [(s.id, s.enabled) for s in acme.schedules] == [("nightly", False)]
    async with AdminClient(app) as other:
        await other.login(GLOBEX_TOKEN)
        status, said = await other.post(PAGE + "/nightly/remove", removal)
        assert status == 403 and said == "globex/boss may not see workspace acme"
    assert re.search(r'id = "nightly"', app.path.read_text()), "nothing removed by another"
