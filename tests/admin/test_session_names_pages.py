"""The console names each session by what a person knows, over real HTTP (issue 43): alice's
DM had a session before `/new` and has one since, whose agent spawned a child. The workspace's
page lists the DM's current session first, its child agent after it, then the earlier one,
each told apart by when, the child by its parent's name and its task; a session's page is
headed by its name and links its parent and children by name; the Usage page ranks them by
the tokens they used, largest first, and its chart measures tokens, the model having no
price. No id is shown, only a link's tooltip holds one."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from runtime.records import SessionRecord
from tests.adapters.slack_harness import globex_workspace
from tests.adapters.telegram_harness import ALICE
from tests.admin.harness import ACME_ADMIN, ACME_TOKEN, GLOBAL_TOKEN, GLOBEX_ADMIN, AdminClient
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

OPERATOR = int(ALICE["telegram_user_id"])
DM = f"Telegram, DM with user{OPERATOR}"  # the fake names alice "user1001"
TASK = "count the lines of every log file under /var/log and say which file grew the most today"
SHORT_TASK = "count the lines of every log file under /var/log and say wh\u2026"
PULSE = {  # run only when asked: "Run now" on the Schedules page
    "id": "pulse",
    "agent": "assistant",
    "cron": "0 3 * * *",
    "prompt": "Say how the disk is.",
    "enabled": False,
    "deliver": "silent",
}
FRESH = "Started a fresh session; the agent no longer sees the earlier conversation."


def unpriced_config(
    topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram, slack: FakeSlack
) -> Path:
    """acme on Telegram (alice), its agent able to spawn a child, on a model without a price."""
    bot = {"bot_token": telegram_api.token, "api_base_url": telegram_api.base_url}
    acme = workspace("acme", [ALICE], telegram=bot, agent_tools=("spawn_agent",))
    acme["schedules"] = [PULSE]
    return write_config(
        topology.folder / "switchboard.toml",
        db=topology.db,
        provider={**anthropic(anthropic_api.url), "prices": {}},
        admin={"token": GLOBAL_TOKEN},
        workspaces=[
            {**acme, "admins": [ACME_ADMIN]},
            {**globex_workspace(slack), "admins": [GLOBEX_ADMIN]},
        ],
    )


@pytest.fixture
async def app(
    console_topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    path = unpriced_config(console_topology, anthropic_api, telegram_api, slack_api)
    yield await console_topology.start(path)
    await console_topology.stop()


class Shown(HTMLParser):
    """A page's words as a browser shows them: text, not attributes (a tooltip aside)."""

    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._hidden += tag in ("script", "style", "title")

    def handle_endtag(self, tag: str) -> None:
        self._hidden -= tag in ("script", "style", "title")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.words.append(data)


def shown(html: str) -> str:
    """The words; of a turn's tool calls, their folded line (a call's unfolded input and
    result are the model's own data, as it was given them)."""
    parser = Shown()
    parser.feed(re.sub(r'<div class="detail">.*?</div>', "", html, flags=re.S))
    return " ".join(" ".join(parser.words).split())


def links(html: str, css_class: str) -> list[tuple[str, str]]:
    """Each link of that class as (its tooltip, its words), in page order."""
    found: list[tuple[str, str]] = []

    class Links(HTMLParser):
        inside: dict[str, str | None] | None = None
        said: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "a" and dict(attrs).get("class") == css_class:
                self.inside, self.said = dict(attrs), []

        def handle_data(self, data: str) -> None:
            if self.inside is not None:
                self.said.append(data)

        def handle_endtag(self, tag: str) -> None:
            if tag == "a" and self.inside is not None:
                found.append((self.inside.get("title") or "", "".join(self.said)))
                self.inside = None

    Links().feed(html)
    return found


def ended(earlier: SessionRecord, later: SessionRecord) -> str:
    """When the earlier session ended, as its name says: the time alone on the same day."""
    start, end = (datetime.fromtimestamp(r.created_at, UTC) for r in (earlier, later))
    return f"{end:%H:%M}" if start.date() == end.date() else moment(later.created_at)


def moment(wall: float) -> str:
    at = datetime.fromtimestamp(wall, UTC)  # acme's timezone
    return f"{at.day} {at:%b %H:%M}"


def answer(body: dict[str, Any]) -> Reply:
    """The parent spawns a child with TASK; the child reports; the parent tells it."""
    said = str(body["messages"])
    if TASK in said and "spawn_agent" not in said:
        return text("42 lines; syslog grew the most.")
    if "started child agent" in said:
        return text("A child agent is on it.")
    return tools(("spawn_agent", {"task": TASK}))


async def test_sessions_are_named_not_numbered_on_every_page(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.script = [text("first answer")]
    telegram_api.push_message("hello", user=OPERATOR)
    await until(lambda: "first answer" in telegram_api.chat(OPERATOR), wait_s=20)
    telegram_api.push_message("/new", user=OPERATOR)
    try:
        await until(lambda: FRESH in str(telegram_api.chat(OPERATOR)), wait_s=20)
    except AssertionError:
        raise AssertionError(str(telegram_api.chat(OPERATOR))) from None
    anthropic_api.responder = answer
    telegram_api.push_message("look after the logs", user=OPERATOR)
    await until(lambda: len(app.runtime.sessions) == 3, wait_s=20)
    await app.runtime.wait_idle()
    earlier, current, child = sorted(
        (s.record for s in app.runtime.sessions.values()), key=lambda r: r.created_at
    )
    assert child.parent_session_id == current.id
    since = moment(current.created_at)
    named = {
        current.id: f"{DM}, since {since}",
        child.id: f"child of {DM}: {SHORT_TASK}",
        earlier.id: (
            f"{DM}, {moment(earlier.created_at)} to {ended(earlier, current)}, ended by /new"
        ),
    }

    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        status, html = await client.get("/admin/w/acme/")
        assert status == 200
        assert links(html, "session") == list(named.items()), "current first, its child next"
        assert "ses_" not in shown(html)

        status, html = await client.get(f"/admin/w/acme/sessions/{child.id}")
        assert status == 200
        words = shown(html)
        assert f"child of {DM}: {SHORT_TASK} \u00b7 assistant/child-1" in words
        assert f"as a child agent of {named[current.id]}" in words
        assert f'title="{current.id}" data-field="parent">' in html
        assert "ses_" not in words
        status, html = await client.get(f"/admin/w/acme/sessions/{child.id}/audit")
        assert f"<title>Audit trail of child of {DM}: {SHORT_TASK} \u00b7 acme" in html
        status, html = await client.get(f"/admin/w/acme/sessions/{current.id}")
        assert f"{named[current.id]} \u00b7 assistant" in shown(html)
        assert f'title="{child.id}">child of {DM}: {SHORT_TASK}</a>' in html
        assert "ses_" not in shown(html)

        status, html = await client.get("/admin/w/acme/usage")
        assert status == 200
        words = shown(html)
        assert "ses_" not in words
        used: dict[str, int] = {}
        for r in await app.runtime.store.read_sql(
            "SELECT session_id, input_tokens + cache_read_tokens + cache_write_tokens"
            " + output_tokens AS tokens FROM model_usage"
        ):
            used[r["session_id"]] = used.get(r["session_id"], 0) + int(r["tokens"])
        assert len(set(used.values())) == 3, "three sessions, each its own number of tokens"
        ranked = sorted(used, key=lambda s: -used[s])
        agent = {earlier.id: "assistant", current.id: "assistant", child.id: "assistant/child-1"}
        ranking = html[html.index('<table class="stack spend" id="sessions">') :]
        ranking = ranking[: ranking.index("</table>")]
        assert [w for _, w in links(ranking.replace("<a href", '<a class="r" href'), "r")] == [
            f"{named[s]} \u00b7 {agent[s]}" for s in ranked
        ], "largest first, by name"
        today = sum(used.values())  # every call was today
        assert f"{today:,} tokens a day at most" in words
        assert "$0.00 a day at most" not in words


async def test_a_schedules_session_is_named_by_its_schedule(
    app: App, anthropic_api: FakeAnthropic
) -> None:
    """Not "no conversation": the schedule that started it."""
    anthropic_api.script = [text("The disk is fine.")]
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        status, _ = await client.post("/admin/w/acme/schedules/pulse", {"action": "run"})
        assert status == 200
        await until(lambda: len(app.runtime.sessions) == 1, wait_s=20)
        await app.runtime.wait_idle()
        [session_id] = list(app.runtime.sessions)
        _, html = await client.get("/admin/w/acme/")
        assert links(html, "session") == [(session_id, "schedule pulse")]
        assert f'title="{session_id}"><code>pulse</code>' not in html  # the words come first
        assert 'title="' + session_id + '">schedule <code>pulse</code></a>' in html
        assert "no conversation" not in shown(html)
        _, html = await client.get(f"/admin/w/acme/sessions/{session_id}")
        assert "schedule pulse \u00b7 assistant" in shown(html)
