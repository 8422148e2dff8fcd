"""Who gets into the console, and how far: over real HTTP against the running App, as an
admin's browser (or an attacker's script) would come."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.admin import AdminDeps, admin_app
from adapters.server.app import App
from tests.admin.harness import (
    ACME_TOKEN,
    GLOBAL_TOKEN,
    GLOBEX_TOKEN,
    AdminClient,
    start_console,
)
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology


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
        db_path, anthropic_api, telegram_api, slack_api, topology=console_topology
    )
    await console_topology.stop()  # while the fakes still answer


def console_urls(app: App, workspace: str) -> list[tuple[str, str]]:
    """(method, path) of every console route under a workspace, with its other parameters
    filled: the routes come from the console's own factory, so a page added later is in."""
    routes = admin_app(AdminDeps(app.bridge, lambda: app.config)).router.routes()
    found = []
    for route in routes:
        canonical = route.resource.canonical if route.resource else ""
        if "{workspace}" not in canonical or route.method == "HEAD":
            continue
        path = canonical.replace("{workspace}", workspace)
        found.append((route.method, "/admin" + re.sub(r"\{[^}]+\}", "x1", path)))
    return found


async def test_without_an_admin_in_the_config_there_is_no_console(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram, slack_api: FakeSlack
) -> None:
    nobody = {"admins": []}
    app = await start_console(
        db_path,
        anthropic_api,
        telegram_api,
        slack_api,
        admin={},
        acme_extra=nobody,
        globex_extra=nobody,
    )
    try:
        async with AdminClient(app) as client:
            assert (await client.get("/admin/login"))[0] == 404
            assert (await client.login(GLOBAL_TOKEN))[0] == 404
            assert (await client.get("/healthz"))[0] == 200
    finally:
        await app.stop()


async def test_login_gives_a_strict_cookie_and_the_admins_workspaces(app: App) -> None:
    async with AdminClient(app) as client:
        status, page = await client.get("/admin/w/acme/")
        assert status == 200 and 'name="token"' in page, "sent to the login page first"
        status, page = await client.login(GLOBAL_TOKEN)
        assert status == 200
        assert re.findall(r'class="workspace" href="/admin/w/(\w+)/"', page) == ["acme", "globex"]
        [cookie] = client.http.cookie_jar
        assert cookie["httponly"] and cookie["samesite"] == "Strict"
        assert cookie["path"] == "/admin" and int(cookie["max-age"]) == 8 * 3600
    async with AdminClient(app) as client:
        status, page = await client.login(ACME_TOKEN)
        assert re.findall(r'class="workspace" href="/admin/w/(\w+)/"', page) == ["acme"]
        assert "acme/lead" in page


async def test_a_wrong_token_is_refused_and_logs_no_token(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with AdminClient(app) as client:
        status, page = await client.login("not-" + GLOBAL_TOKEN)
        assert status == 401 and "not an admin" in page
        assert len(client.http.cookie_jar) == 0
        status, _ = await client.login(GLOBAL_TOKEN)
        assert status == 200
    logged = "\n".join(r.getMessage() + str(r.__dict__) for r in caplog.records)
    assert "admin login refused" in logged and "admin logged in" in logged
    assert GLOBAL_TOKEN not in logged


async def test_wrong_tokens_are_rate_limited_but_never_the_right_one(app: App) -> None:
    """Behind a shared proxy every admin has one address: five wrong tries there must not lock
    every admin out (they once did, for a minute)."""
    async with AdminClient(app) as guesser, AdminClient(app) as admin:
        for _ in range(5):
            status, _ = await guesser.login("guess-" + "x" * 20)
            assert status == 401
        async with guesser.http.post(
            guesser.base + "/admin/login", data={"token": "guess-" + "y" * 20}
        ) as response:
            assert response.status == 429, "the sixth wrong try in a minute"
            assert int(response.headers["Retry-After"]) > 0
            assert "Too many wrong tokens" in await response.text()
        status, page = await admin.login(GLOBAL_TOKEN)
        assert status == 200 and "Log out" in page, "the right token, from the same address"


async def test_guesses_sent_all_at_once_are_limited_too(app: App) -> None:
    """Twenty connections send their headers, then, together, their bodies: an attacker who
    holds the bodies back must not get every guess past the check before one is counted."""

    async def held_back(n: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
        reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
        body = f"token=guess-{n:04d}-{'x' * 20}".encode()
        writer.write(
            b"POST /admin/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        )
        await writer.drain()
        return reader, writer, body

    guesses = [await held_back(n) for n in range(20)]
    await asyncio.sleep(0.3)  # every handler is waiting for its body
    for _, writer, body in guesses:
        writer.write(body)
    statuses = []
    for reader, writer, _ in guesses:
        statuses.append(int((await reader.readline()).split()[1]))
        writer.close()
    assert sorted(statuses) == [401] * 5 + [429] * 15


async def test_a_workspace_admin_gets_403_on_every_url_of_another_workspace(app: App) -> None:
    urls = console_urls(app, "globex")
    assert ("GET", "/admin/w/globex/") in urls
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        for method, path in urls:
            if method == "GET":
                status, _ = await client.get(path, allow_redirects=False)
            else:
                status, _ = await client.post(path, {})
            assert status == 403, f"{method} {path}"
        status, _ = await client.get("/admin/w/acme/")
        assert status == 200, "their own workspace still opens"
    async with AdminClient(app) as client:
        await client.login(GLOBEX_TOKEN)
        assert (await client.get("/admin/w/acme/", allow_redirects=False))[0] == 403


async def test_no_session_no_page_and_no_action(app: App) -> None:
    async with AdminClient(app) as client:
        for method, path in [("GET", "/admin/"), *console_urls(app, "acme")]:
            if method == "GET":
                status, _ = await client.get(path, allow_redirects=False)
                assert status == 303, path
            else:
                assert (await client.post(path, {}, csrf=False))[0] == 401, path
        client.http.cookie_jar.update_cookies({"switchboard_admin": "forged"})
        assert (await client.get("/admin/", allow_redirects=False))[0] == 303


async def test_a_post_without_the_pages_csrf_token_is_refused(app: App) -> None:
    async with AdminClient(app) as client:
        await client.login(GLOBAL_TOKEN)
        assert (await client.post("/admin/logout", {}, csrf=False))[0] == 403
        assert (await client.post("/admin/logout", {"csrf": "forged"}, csrf=False))[0] == 403
        assert (await client.get("/admin/", allow_redirects=False))[0] == 200, "still in"
        status, page = await client.post("/admin/logout")
        assert status == 200 and 'name="token"' in page
        assert (await client.get("/admin/", allow_redirects=False))[0] == 303, "logged out"


async def test_a_login_expires(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram, slack_api: FakeSlack
) -> None:
    admin = {"token": GLOBAL_TOKEN, "session_ttl_s": 3}  # a loaded machine takes a second
    app = await start_console(db_path, anthropic_api, telegram_api, slack_api, admin=admin)
    try:
        async with AdminClient(app) as client:
            await client.login(GLOBAL_TOKEN)
            assert (await client.get("/admin/", allow_redirects=False))[0] == 200
            await asyncio.sleep(3.2)
            assert (await client.get("/admin/", allow_redirects=False))[0] == 303
    finally:
        await app.stop()


async def test_no_page_shows_a_secret(app: App) -> None:
    secrets = app.config.secret_values()
    assert GLOBAL_TOKEN in secrets and ACME_TOKEN in secrets
    async with AdminClient(app) as client:
        await client.login(GLOBAL_TOKEN)
        pages = ["/admin/", *(p for m, p in console_urls(app, "acme") if m == "GET")]
        pages += [p for m, p in console_urls(app, "globex") if m == "GET"]
        for path in pages:
            status, html = await client.get(path)
            assert status == 200 or "x1" in path, path  # x1: an object that is not there
            for secret in secrets:
                assert secret not in html, f"{path} shows a secret"
