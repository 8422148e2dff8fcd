"""The console's Providers page over real HTTP, on each console topology (issue 41): acme's
agent with its chain, the first provider and its fallback. While the first answers, it is
ready with the session on it; once it is rate limited, the page says so, until when in the
workspace's timezone, its last failure (escaped: a provider's words are not HTML), the session
now on the fallback and the switch. No script needed: it is all in the page served."""

from __future__ import annotations

from typing import Any

from tests.adapters.fallback_scene import (
    ADMIN_TOKEN,
    BACKUP,
    PRIMARY,
    TIMEZONE,
    fall_back,
    start_scene,
)
from tests.admin.harness import AdminClient
from tests.admin.page_parts import cell, row
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology

PAGE = "/admin/w/acme/providers"
HOSTILE = "Slow down <script>alert(1)</script>"


async def test_the_page_shows_each_candidate_as_it_stands(
    console_topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    aiohttp_server: Any,
) -> None:
    scene = await start_scene(console_topology, anthropic_api, telegram_api, aiohttp_server)
    scene.primary.message = HOSTILE
    async with AdminClient(scene.app) as admin:
        await admin.login(ADMIN_TOKEN)
        status, overview = await admin.get("/admin/w/acme/")
        assert status == 200 and f'href="{PAGE}"' in overview, "a tab of the workspace"

        assert await scene.ask("Hello?") == "From the first."
        status, html = await admin.get(PAGE)
        assert status == 200
        assert '<section class="chain" data-agent="assistant">' in html
        first = row(html, "data-candidate", PRIMARY)
        assert 'data-state="ready"' in first and cell(first, "sessions") == "1"
        assert cell(first, "until") == "\u2014" and cell(first, "failure") == "\u2014"
        assert cell(row(html, "data-candidate", BACKUP), "sessions") == "0"
        assert "Switches" not in html

        await fall_back(scene)
        status, html = await admin.get(PAGE)

        first = row(html, "data-candidate", PRIMARY)
        assert 'data-state="cooling"' in first
        assert cell(first, "state") == "cooling (rate limited)"
        assert cell(first, "until").startswith("until ") and TIMEZONE in cell(first, "until")
        assert "(in 10 min)" in cell(first, "until")
        assert cell(first, "failure") == (
            "Anthropic API 429 rate_limit_error: Slow down &lt;script&gt;alert(1)&lt;/script&gt;"
        )
        assert "<script>alert(1)" not in html, "a provider's words are escaped"
        assert cell(first, "sessions") == "0"
        backup = row(html, "data-candidate", BACKUP)
        assert 'data-state="ready"' in backup and cell(backup, "sessions") == "1"
        assert f"{PRIMARY} &rarr; {BACKUP} (rate_limited): 1" in html
        assert "test-key" not in html
