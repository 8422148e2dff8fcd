"""The console's Schedules page over real HTTP against the running App, on the real clock: a
schedule every two seconds listed with when it runs next and how its last run went, paused,
run now and resumed; a wake-up the agent set, cancelled; each action in the audit of admin
actions; an unknown id answered 404 with the ids there are; an admin of another workspace and
a form without the page's token refused; a workspace without schedules says where they go."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from tests.adapters.telegram_harness import ALICE
from tests.admin.harness import ACME_TOKEN, GLOBAL_TOKEN, GLOBEX_TOKEN, AdminClient, start_console
from tests.admin.page_parts import cell, flash, row
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

OPERATOR = int(ALICE["telegram_user_id"])
PAGE = "/admin/w/acme/schedules"
TICK = {
    "id": "tick",
    "agent": "assistant",
    "every": "2s",
    "prompt": "Check the queue.",
    "deliver": "silent",  # its answers do not queue up in chat for the App's stop to wait on
}
NIGHTLY = {
    "id": "nightly",
    "agent": "assistant",
    "cron": "0 3 * * *",
    "prompt": "Rotate the logs.",
    "enabled": False,
}
REMIND = "remind me to check the deploy"
NOTE = "check the deploy again"


def answer(body: dict[str, Any]) -> Reply:
    """The model: alice's request sets a wake-up an hour away; a scheduled run answers."""
    if REMIND in json.dumps(body["messages"][-1]):
        return tools(("schedule_wakeup", {"when": "1h", "note": NOTE}))
    return text("Queue checked: nothing stuck.")


@pytest.fixture
async def app(
    console_topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    """acme has a schedule every two seconds and one off in the config; globex has none."""
    anthropic_api.responder = answer
    yield await start_console(
        db_path,
        anthropic_api,
        telegram_api,
        slack_api,
        agent_tools=("notify_operator", "schedule_wakeup"),
        acme_extra={"schedules": [TICK, NIGHTLY]},
        server={"schedule_min_every": "1s"},  # runs within the test's seconds
        topology=console_topology,
    )
    await console_topology.stop()  # while the fakes still answer


async def page_until(client: AdminClient, check: Callable[[str], bool], wait_s: float = 20) -> str:
    """The Schedules page, reloaded until `check` holds for it."""
    deadline = asyncio.get_running_loop().time() + wait_s
    while True:
        status, html = await client.get(PAGE)
        assert status == 200
        if check(html):
            return html
        assert asyncio.get_running_loop().time() < deadline, "the page never showed it"
        await asyncio.sleep(0.05)


async def test_an_admin_pauses_runs_and_resumes_a_schedule_and_cancels_a_wakeup(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        html = await page_until(client, lambda h: 'data-outcome="completed"' in h)
        assert '<a href="/admin/w/acme/schedules" aria-current="page">Schedules</a>' in html
        tick = row(html, "data-schedule", "tick")
        assert cell(tick, "timing") == "every 2s" and cell(tick, "state") == "runs"
        assert cell(tick, "next").endswith(" UTC"), "when it runs next"
        assert re.fullmatch(r"\S+ \S+ UTC, (answered|started)", cell(tick, "last"))
        assert 'value="pause">Pause<' in tick and 'value="resume"' not in tick
        nightly = row(html, "data-schedule", "nightly")
        assert cell(nightly, "state") == "off in the config"
        assert cell(nightly, "timing") == "cron 0 3 * * * (UTC)"
        assert cell(nightly, "next") == "\u2014" and cell(nightly, "last") == "not run yet"
        assert 'value="pause"' not in nightly and 'value="run">Run now<' in nightly
        assert cell(row(html, "data-run", "schedule:tick"), "outcome") == "answered"

        status, html = await client.post(PAGE + "/tick", {"action": "pause"})
        assert status == 200 and flash(html).startswith("Schedule tick is paused")
        tick = row(html, "data-schedule", "tick")
        assert cell(tick, "state") == "paused by admin acme/lead"
        assert cell(tick, "next") == "\u2014"
        assert 'value="resume">Resume<' in tick and 'value="pause"' not in tick
        _, html = await client.post(PAGE + "/tick", {"action": "pause"})
        assert flash(html) == "Not done: schedule tick is already paused by admin acme/lead."

        await page_until(client, lambda h: 'data-outcome="started"' not in h)  # none going
        asked = len(anthropic_api.requests)
        status, html = await client.post(PAGE + "/tick", {"action": "run"})
        assert status == 200 and flash(html).startswith("Schedule tick runs now")
        await until(lambda: len(anthropic_api.requests) > asked, wait_s=20)
        assert "Run now, asked for by admin acme/lead" in json.dumps(anthropic_api.requests[-1])
        status, html = await client.post(PAGE + "/tick", {"action": "resume"})
        assert re.fullmatch(r"Schedule tick runs again; next at \S+ UTC\.", flash(html))
        assert cell(row(html, "data-schedule", "tick"), "state") == "runs"

        telegram_api.push_message(REMIND, user=OPERATOR)
        html = await page_until(client, lambda h: "data-wakeup=" in h)
        [wakeup_id] = re.findall(r'<tr data-wakeup="([^"]+)"', html)
        wakeup = row(html, "data-wakeup", wakeup_id)
        assert cell(wakeup, "agent") == "assistant" and cell(wakeup, "note") == NOTE
        [session] = re.findall(r'href="(/admin/w/acme/sessions/[^"]+)"', wakeup)
        status, html = await client.post(f"/admin/w/acme/wakeups/{wakeup_id}", {"action": "cancel"})
        assert re.fullmatch(
            rf"The wake-up assistant had set for \S+ \S+ UTC is cancelled \('{NOTE}'\); "
            r"it will not run\.",
            flash(html),
        )
        assert wakeup_id not in flash(html)
        assert "data-wakeup=" not in html and 'id="no-wakeups"' in html

        _, overview = await client.get("/admin/w/acme/")
        actions = re.findall(r'<li data-action="(\w+)">[^<]*acme/lead', overview)
        assert actions[:4] == ["cancel_wakeup", "resume_schedule", "run_schedule", "pause_schedule"]
        assert "acme/lead paused a schedule: tick (every 2s, agent assistant)" in overview
        _, audit = await client.get(session + "/audit")
        assert "admin acme/lead cancelled a wake-up" in audit, "in the session's audit trail"


async def test_unknown_ids_and_refused_posts_change_nothing(app: App) -> None:
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        await client.get(PAGE)
        status, said = await client.post(PAGE + "/tick2", {"action": "pause"})
        assert status == 404 and said == "no schedule 'tick2' here (schedules: tick, nightly)"
        status, said = await client.post("/admin/w/acme/wakeups/wk_nope", {"action": "cancel"})
        assert status == 404 and said == "no pending wake-up 'wk_nope' here (pending: none)"
        status, _ = await client.post(PAGE + "/tick", {"action": "delete"})
        assert status == 400
        status, _ = await client.post(PAGE + "/tick", {"action": "pause", "csrf": "forged"})
        assert status == 403, "a form that is not the page's"
    async with AdminClient(app) as other:
        await other.login(GLOBEX_TOKEN)
        status, said = await other.post(PAGE + "/tick", {"action": "pause"})
        assert status == 403 and said == "globex/boss may not see workspace acme"
    async with AdminClient(app) as client:
        await client.login(GLOBAL_TOKEN)
        _, html = await client.get(PAGE)
        assert cell(row(html, "data-schedule", "tick"), "state") == "runs", "nothing paused it"
        status, html = await client.get("/admin/w/globex/schedules")
        assert status == 200
        assert (
            "No schedules: add one here, or set them in the config under "
            "<code>[[workspaces.schedules]]</code>." in html
        )
        assert 'id="no-wakeups"' in html and 'id="no-runs"' in html
