"""The console's Memory page of an agent over real HTTP (issue 40): every memory it keeps, of
both scopes, with operator, date, source and a link to the session it came from; a search;
Forget with the page's token, in the audit of admin actions, after which the agent no longer
has it; Export as JSON; the admin of another workspace refused, an unknown agent a 404."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from html import unescape as html_unescape
from pathlib import Path

import pytest

from adapters.server.app import App
from runtime.memory_values import Audience, MemoryScope, MemorySource
from tests.admin.harness import ACME_TOKEN, GLOBEX_TOKEN, AdminClient, start_console
from tests.admin.page_parts import cell, flash, row
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology

PAGE = "/admin/w/acme/memory/assistant"
AGENT = "acme/assistant"
PRIVATE = "Alice's daughter is called Maya"
SHARED = "Our deploy window is Tuesdays 14:00 UTC"


@pytest.fixture
async def app(
    console_topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    yield await start_console(
        db_path, anthropic_api, telegram_api, slack_api, topology=console_topology
    )
    await console_topology.stop()


async def seed(app: App) -> tuple[str, str]:
    """alice's private memory (from her DM's session) and the agent's, from a quote."""
    memories = app.runtime.memories
    mine = await memories.remember(
        Audience(AGENT, "alice", True),
        PRIVATE,
        MemoryScope.OPERATOR,
        session_id="ses_from_the_dm",
        message_id="msg_1",
        source=MemorySource.OPERATOR,
        key="seed-private",
    )
    ours = await memories.remember(
        Audience(AGENT, "alice", False),
        SHARED,
        None,
        session_id=None,
        message_id=None,
        source=MemorySource.QUOTE,
        key="seed-shared",
    )
    return mine.memory.id, ours.memory.id


async def test_an_admin_lists_searches_forgets_and_exports_an_agents_memory(app: App) -> None:
    mine, ours = await seed(app)
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        status, html = await client.get("/admin/w/acme/memory")
        assert status == 200, "the tab opens on the default agent's page"
        assert '<a href="/admin/w/acme/memory" aria-current="page">Memory</a>' in html
        private = row(html, "data-memory", mine)
        assert cell(private, "scope") == "operator" and cell(private, "operator") == "alice"
        assert html_unescape(cell(private, "text")) == PRIVATE and cell(private, "when").endswith(
            " UTC"
        )
        assert cell(private, "source").startswith("operator")
        assert 'href="/admin/w/acme/sessions/ses_from_the_dm"' in private
        shared = row(html, "data-memory", ours)
        assert cell(shared, "scope") == "agent" and cell(shared, "source") == "quote"
        assert cell(shared, "operator") == "\u2014" and "/sessions/" not in shared

        _, html = await client.get(PAGE, params={"q": "Maya"})
        assert f'data-memory="{mine}"' in html and f'data-memory="{ours}"' not in html
        _, html = await client.get(PAGE, params={"q": "nothing-like-it"})
        assert 'id="no-memories"' in html

        status, _ = await client.post(f"{PAGE}/{mine}", {"action": "forget", "csrf": "forged"})
        assert status == 403, "a form that is not the page's"
        assert await app.runtime.memories.one(AGENT, mine) is not None
        status, html = await client.post(f"{PAGE}/{mine}", {"action": "forget"})
        assert status == 200 and flash(html).startswith(f"Memory {mine} of assistant is forgotten")
        assert f'data-memory="{mine}"' not in html and f'data-memory="{ours}"' in html
        assert await app.runtime.memories.one(AGENT, mine) is None
        status, said = await client.post(f"{PAGE}/{mine}", {"action": "forget"})
        assert status == 404 and said == f"agent assistant keeps no memory {mine!r}"
        _, overview = await client.get("/admin/w/acme/")
        assert '<li data-action="forget_memory">' in overview
        assert PRIVATE not in overview, "the audit names the memory, not its text"

        async with client.http.get(client.base + PAGE + "/export") as response:
            assert response.status == 200
            assert response.headers["Content-Disposition"].startswith("attachment;")
            exported = json.loads(await response.text())
        assert exported["agent"] == "assistant"
        [kept] = exported["memories"]
        assert kept["id"] == ours and kept["text"] == SHARED and kept["source"] == "quote"
        assert kept["scope"] == "agent" and kept["created_at"].endswith("+00:00")

        status, said = await client.get("/admin/w/acme/memory/nobody")
        assert status == 404 and said == "no agent 'nobody' here (agents: assistant)"


async def test_another_workspaces_admin_sees_and_forgets_nothing(app: App) -> None:
    mine, _ = await seed(app)
    async with AdminClient(app) as other:
        await other.login(GLOBEX_TOKEN)
        for path in (PAGE, PAGE + "/export", "/admin/w/acme/memory"):
            status, said = await other.get(path)
            assert status == 403 and said == "globex/boss may not see workspace acme", path
        await other.get("/admin/w/globex/memory")  # a page of its own, for a token
        status, _ = await other.post(f"{PAGE}/{mine}", {"action": "forget"})
        assert status == 403
        status, html = await other.get("/admin/w/globex/memory")
        assert status == 200 and 'id="no-memories"' in html, "globex's agent keeps none"
    assert await app.runtime.memories.one(AGENT, mine) is not None
