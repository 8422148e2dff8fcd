"""Served behind TLS termination and a reverse proxy, as teams expose it: the console's cookie is
`Secure` when the public address is https, a shared address's wrong tries do not lock the admins
out, and `/metrics` (which names every workspace) answers only a client on this machine that no
proxy passed on, or one with the metrics token. On each topology that serves the port."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest

from adapters.server.app import App
from tests.adapters.telegram_harness import ALICE
from tests.admin.harness import GLOBAL_TOKEN, AdminClient
from tests.config_file import workspace, write_config
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology

METRICS_TOKEN = "metrics-token-for-the-tests-0123"
PROXIED = [
    {"X-Forwarded-For": "203.0.113.9"},
    {"Forwarded": "for=203.0.113.9;proto=https"},
    {"X-Real-IP": "203.0.113.9"},
]


@pytest.fixture
async def app(topology: Topology, telegram_api: FakeTelegram) -> AsyncIterator[App]:
    bot = {
        "bot_token": telegram_api.token,
        "api_base_url": telegram_api.base_url,
        "mode": "webhook",
        "webhook_secret": "proxy-test-secret",
    }
    path = write_config(
        topology.folder / "switchboard.toml",
        db=topology.db,
        workspaces=[workspace("acme", [ALICE], telegram=bot)],
        public_url="https://bot.example.com",
        admin={"token": GLOBAL_TOKEN},
        server={"metrics_token": METRICS_TOKEN},
    )
    yield await topology.start(path)
    await topology.stop()  # while the fakes still answer


async def scrape(app: App, headers: dict[str, str]) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"http://127.0.0.1:{app.port}/metrics", headers=headers) as response,
    ):
        return response.status, await response.text()


async def test_metrics_answer_this_machine_or_the_token_and_no_one_a_proxy_passed_on(
    app: App,
) -> None:
    status, body = await scrape(app, {})
    assert status == 200 and 'workspace="acme"' in body, "a scraper on this machine"
    for proxied in PROXIED:
        status, body = await scrape(app, proxied)
        assert status == 401 and "acme" not in body, f"passed on by a proxy: {proxied}"
        assert "metrics_token" in body, "the refusal says how to get in"
        status, body = await scrape(app, {**proxied, "Authorization": f"Bearer {METRICS_TOKEN}"})
        assert status == 200 and 'workspace="acme"' in body, "with the token, from anywhere"
    wrong = {**PROXIED[0], "Authorization": f"Bearer {METRICS_TOKEN[:-1]}x"}
    assert (await scrape(app, wrong))[0] == 401


async def console(topology: Topology, telegram: FakeTelegram, public_url: str | None) -> App:
    """acme on a polling bot, with the global admin's console."""
    bot = {"bot_token": telegram.token, "api_base_url": telegram.base_url}
    path = write_config(
        topology.folder / "switchboard.toml",
        db=topology.db,
        workspaces=[workspace("acme", [ALICE], telegram=bot)],
        public_url=public_url,
        admin={"token": GLOBAL_TOKEN},
    )
    return await topology.start(path)


async def test_the_console_cookie_is_secure_when_the_public_address_is_https(
    console_topology: Topology, telegram_api: FakeTelegram
) -> None:
    app = await console(console_topology, telegram_api, "https://bot.example.com")
    url = f"http://127.0.0.1:{app.port}/admin/login"  # TLS ends at the load balancer
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, data={"token": GLOBAL_TOKEN}, allow_redirects=False) as response,
    ):
        assert response.status == 303
        [cookie] = response.headers.getall("Set-Cookie")
    attributes = [part.strip().lower() for part in cookie.split(";")]
    assert "secure" in attributes and "httponly" in attributes, cookie


async def test_wrong_tries_from_a_shared_address_do_not_lock_the_admins_out(
    console_topology: Topology, telegram_api: FakeTelegram
) -> None:
    app = await console(console_topology, telegram_api, None)
    async with AdminClient(app) as stranger, AdminClient(app) as admin:
        statuses = [(await stranger.login(f"guess-{n:02d}-" + "x" * 16))[0] for n in range(8)]
        assert statuses == [401] * 5 + [429] * 3
        status, page = await admin.login(GLOBAL_TOKEN)
        assert status == 200 and "Log out" in page
