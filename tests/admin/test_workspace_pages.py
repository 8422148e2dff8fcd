"""The workspace pages an admin sees and steers with, over real HTTP against the running App:
a running turn's step and Stop, queue mode, failed deliveries retried and discarded, an
undelivered notification sent to an operator, the live feed; another workspace's objects
are not found, and no secret is shown."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from adapters.server.app import App
from runtime.messages import QueueMode
from runtime.results import SessionState
from tests.admin.harness import ACME_TOKEN, GLOBAL_TOKEN, AdminClient, start_console
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

ALICE = 1001


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


def acme_session(app: App) -> str:
    [session] = [
        s.id for s in app.runtime.sessions.values() if s.record.agent_id == "acme/assistant"
    ]
    return session


def cell(html: str, field: str) -> str:
    found = re.search(rf'data-field="{field}">([^<]*)<', html)
    assert found is not None, f"no {field} cell"
    return found.group(1)


def stop_button(html: str) -> str:
    """The session page's Stop button's start tag."""
    found = re.search(r'<button type="submit" name="action" value="stop"[^>]*>', html)
    assert found is not None, "no Stop button"
    return found.group(0)


async def running_turn(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> tuple[str, asyncio.Event]:
    """Alice asks; the model's answer is held back: a turn runs until the event is set. It
    is waited for until its model call arrives: the runtime takes a turn (`Session.running`)
    a moment before it records it, and the pages read the record."""
    hold = asyncio.Event()
    anthropic_api.script = [text("Deployed.", hold=hold)]
    telegram_api.push_message("deploy the release", user=ALICE)
    await until(lambda: bool(anthropic_api.requests))
    return acme_session(app), hold


async def test_a_running_turn_is_shown_and_stopped_from_its_page(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    session_id, _ = await running_turn(app, anthropic_api, telegram_api)
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        status, html = await client.get("/admin/w/acme/")
        assert status == 200
        assert f'href="/admin/w/acme/sessions/{session_id}"' in html
        row = html[html.index(f'<tr data-session="{session_id}" data-state="running"') :]
        assert cell(row, "doing").startswith("thinking (model call) for ")
        link = f'class="session" href="/admin/w/acme/sessions/{session_id}" title="{session_id}">'
        assert f"{link}Telegram, DM with user{ALICE}</a>" in row, "named, not by its id"
        connection = html[html.index('<tr data-connection="telegram"') :]
        assert cell(connection, "mode") == "polling" and cell(connection, "up") == "up"
        assert cell(connection, "last_event") != "\u2014", "alice's message arrived"
        status, html = await client.get(f"/admin/w/acme/sessions/{session_id}")
        assert stop_button(html).endswith('id="stop">'), "Stop pressable while it runs"
        status, html = await client.post(f"/admin/w/acme/sessions/{session_id}", {"action": "stop"})
        assert status == 200 and '<p class="flash" role="status">Stopped the turn run_' in html
        assert cell(html, "doing") == "idle"
        assert 'aria-disabled="true"' in stop_button(html), "Stop kept, not pressable"
        assert '<span class="muted" id="stop-why">Nothing runs now.</span>' in html
        assert "stopped by admin acme/lead" in html, "the turn says who stopped it"
        _, audit = await client.get(f"/admin/w/acme/sessions/{session_id}/audit")
        assert "admin acme/lead stopped the turn" in audit
        await until(
            lambda: "Stopped from the admin console by acme/lead." in telegram_api.chat(ALICE)
        )
        status, html = await client.post(f"/admin/w/acme/sessions/{session_id}", {"action": "stop"})
        assert f"Not done: nothing runs in Telegram, DM with user{ALICE} now" in html


async def test_the_queue_mode_is_changed_from_the_session_page(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    telegram_api.push_message("hello", user=ALICE)
    await until(lambda: bool(app.runtime.sessions))
    session_id = acme_session(app)
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        await client.get(f"/admin/w/acme/sessions/{session_id}")
        status, html = await client.post(
            f"/admin/w/acme/sessions/{session_id}", {"action": "queue_mode", "mode": "collect"}
        )
        assert status == 200 and "now queues in collect mode" in html
        assert cell(html, "mode") == "collect"
        assert app.runtime.status(session_id).mode is QueueMode.COLLECT
        _, audit = await client.get(f"/admin/w/acme/sessions/{session_id}/audit")
        assert "admin acme/lead changed the queue mode: steer \u2192 collect" in audit
        status, _ = await client.post(
            f"/admin/w/acme/sessions/{session_id}", {"action": "queue_mode", "mode": "fast"}
        )
        assert status == 400


async def test_the_live_feed_streams_the_steps_of_a_running_turn(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        async with client.http.get(
            client.base + "/admin/w/acme/live", headers={"Accept": "text/event-stream"}
        ) as stream:
            assert stream.headers["Content-Type"] == "text/event-stream"

            async def rows() -> AsyncIterator[list[dict[str, Any]]]:
                async for line in stream.content:
                    if line.startswith(b"data: "):
                        yield json.loads(line[6:])

            feed = rows()
            assert await anext(feed) == []
            session_id, hold = await running_turn(app, anthropic_api, telegram_api)
            async for found in feed:
                if found and found[0]["state"] == SessionState.RUNNING:
                    break
            assert found[0]["session"] == session_id and found[0]["step"]
            hold.set()
            async for found in feed:
                if found[0]["state"] == SessionState.IDLE:
                    break
            assert found[0]["run"] is None
        status, snapshot = await client.get("/admin/w/acme/live")
        assert status == 200 and json.loads(snapshot)[0]["session"] == session_id


async def test_the_live_feed_ends_when_its_login_does(app: App) -> None:
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        async with client.http.get(
            client.base + "/admin/w/acme/live", headers={"Accept": "text/event-stream"}
        ) as stream:
            assert (await stream.content.readline()).startswith(b"data: ")
            await client.get("/admin/")
            assert (await client.post("/admin/logout"))[0] == 200
            async with asyncio.timeout(20):
                rest = await stream.content.read()  # to the end: the server closed it
            assert b"data: " not in rest, "no rows after logging out"


async def test_a_live_feed_starting_as_the_server_stops_does_not_hold_the_stop(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop ends the live feeds open then. A feed whose answer was still being started was
    counted among them only once started, so a stop that began meanwhile missed it, and then
    waited for the open tab: a minute, aiohttp's limit. A feed asked for after the stop began
    is refused."""
    entered, release = asyncio.Event(), asyncio.Event()
    prepare = web.StreamResponse.prepare

    async def held(self: web.StreamResponse, request: web.BaseRequest) -> Any:
        if self.headers.get("Content-Type") == "text/event-stream" and not release.is_set():
            entered.set()
            await release.wait()
        return await prepare(self, request)

    monkeypatch.setattr(web.StreamResponse, "prepare", held)
    live = "/admin/w/acme/live"
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)

        async def feed() -> bytes:
            async with client.http.get(
                client.base + live, headers={"Accept": "text/event-stream"}
            ) as stream:
                return await stream.content.read()

        reading = asyncio.create_task(feed())
        async with asyncio.timeout(10):
            await entered.wait()
        server = app.http._runner
        assert server is not None
        await server.app.shutdown()  # the stop's first step: the open feeds end
        release.set()
        async with asyncio.timeout(10):
            assert b"data: " not in await reading, "the feed ended, with no rows"
        async with client.http.get(
            client.base + live, headers={"Accept": "text/event-stream"}
        ) as late:
            assert late.status == 503


async def test_a_failed_delivery_is_retried_and_another_discarded(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    telegram_api.fail(
        "sendMessage",
        400,
        "Bad Request: chat not found",
        times=2,
        when=lambda p: "answer." in p.get("text", ""),
    )
    anthropic_api.script = [text("The first answer."), text("The second answer.")]
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)

        async def failed() -> list[str]:
            _, html = await client.get("/admin/w/acme/deliveries")
            return re.findall(r'<tr data-delivery="([^"]+)" data-status="failed"', html)

        for n, prompt in enumerate(("first", "second"), start=1):
            telegram_api.push_message(prompt, user=ALICE)
            for _ in range(500):
                if len(found := await failed()) == n:
                    break
                await asyncio.sleep(0.02)
        first, second = found
        _, html = await client.get("/admin/w/acme/")
        assert '<span id="failed-deliveries" data-count="failed_deliveries">2</span>' in html
        _, html = await client.get("/admin/w/acme/deliveries")
        assert "Telegram 400: Chat not found" in html
        assert 'button type="submit" name="action" value="retry"' in html
        status, html = await client.post(f"/admin/w/acme/deliveries/{first}", {"action": "retry"})
        assert status == 200 and f"Delivery {first} is queued again." in html
        await until(lambda: "The first answer." in telegram_api.chat(ALICE))
        status, html = await client.post(
            f"/admin/w/acme/deliveries/{second}", {"action": "discard"}
        )
        assert f"Delivery {second} was discarded." in html
        assert await failed() == []
        assert "The second answer." not in telegram_api.chat(ALICE)
        _, html = await client.get("/admin/w/acme/")
        assert 'data-action="retry_delivery"' in html and 'data-action="discard_delivery"' in html


async def test_an_undelivered_notification_is_sent_to_a_chosen_operator(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    telegram_api.fail(
        "sendMessage",
        403,
        "Forbidden: bot was blocked by the user",
        when=lambda p: "Disk at 95%" in p.get("text", ""),
    )
    anthropic_api.script = [tools(("notify_operator", {"message": "Disk at 95%"})), text("Done.")]
    telegram_api.push_message("check the disks", user=ALICE)
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        for _ in range(400):
            _, html = await client.get("/admin/w/acme/notifications")
            if 'data-status="failed"' in html:  # routed, and its delivery failed
                break
            await asyncio.sleep(0.02)
        [notification] = re.findall(r'<tr data-notification="([^"]+)" data-status="failed"', html)
        assert '<option value="alice">alice (primary)</option>' in html
        status, html = await client.post(
            f"/admin/w/acme/notifications/{notification}",
            {"action": "reroute", "operator": "alice"},
        )
        assert status == 200 and f"Notification {notification} is on its way to alice." in html
        await until(lambda: any("Disk at 95%" in t for t in telegram_api.chat(ALICE)))
        await app.bridge.settle()
        _, html = await client.get("/admin/w/acme/notifications")
        assert 'id="no-notifications"' in html
        _, html = await client.get("/admin/w/acme/")
        assert 'data-count="undelivered_notifications">0<' in html


async def failed_notification(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram, error: str
) -> tuple[str, str, str]:
    """A notification of acme's agent whose delivery failed: (session, delivery, notification)."""
    telegram_api.fail("sendMessage", 400, error, when=lambda p: "Disk" in p.get("text", ""))
    anthropic_api.script = [tools(("notify_operator", {"message": "Disk at 95%"})), text("Done.")]
    telegram_api.push_message("check the disks", user=ALICE)
    for _ in range(500):
        failed = await app.bridge.store.workspace_deliveries("acme")
        if failed and failed[0].last_error:
            break
        await asyncio.sleep(0.02)
    await app.bridge.settle()
    [record] = await app.runtime.store.notifications()
    return record.session_id, failed[0].id, record.notification_id


async def test_another_workspaces_objects_are_not_found_under_this_workspace(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    session, delivery, notification = await failed_notification(
        app, anthropic_api, telegram_api, "Bad Request: chat not found"
    )
    async with AdminClient(app) as client:
        await client.login(GLOBAL_TOKEN)  # may see both workspaces: only the object is wrong
        await client.get("/admin/")
        assert (await client.get(f"/admin/w/acme/sessions/{session}"))[0] == 200
        assert (await client.get(f"/admin/w/globex/sessions/{session}"))[0] == 404
        [before] = await app.bridge.store.workspace_deliveries("acme")
        for path, form in [
            (f"/admin/w/globex/sessions/{session}", {"action": "stop"}),
            (f"/admin/w/globex/sessions/{session}", {"action": "queue_mode", "mode": "collect"}),
            (f"/admin/w/globex/deliveries/{delivery}", {"action": "retry"}),
            (f"/admin/w/globex/deliveries/{delivery}", {"action": "discard"}),
            (
                f"/admin/w/globex/notifications/{notification}",
                {"action": "reroute", "operator": "bob"},
            ),
        ]:
            status, _ = await client.post(path, form)
            assert status == 404, f"{form['action']} {path}"
        assert app.runtime.status(session).mode is QueueMode.STEER
        [still] = await app.bridge.store.workspace_deliveries("acme")
        assert still.id == delivery, "not discarded"
        assert (still.status, still.attempts) == (before.status, before.attempts), "not retried"


async def test_no_workspace_page_shows_a_secret_even_in_an_error(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    session, _, _ = await failed_notification(
        app, anthropic_api, telegram_api, f"Bad Request: no bot {telegram_api.token} here"
    )
    secrets = app.config.secret_values()
    assert telegram_api.token in secrets
    async with AdminClient(app) as client:
        await client.login(GLOBAL_TOKEN)
        pages = [
            f"/admin/w/{w}/{p}"
            for w in ("acme", "globex")
            for p in ("", "deliveries", "notifications", "live", "providers")
        ]
        pages += [f"/admin/w/acme/sessions/{session}", f"/admin/w/acme/sessions/{session}/audit"]
        for path in pages:
            status, html = await client.get(path)
            assert status == 200, path
            for secret in secrets:
                assert secret not in html, f"{path} shows a secret"
        _, html = await client.get("/admin/w/acme/deliveries")
        # python-telegram-bot capitalizes the error (the token in it comes out lowercased)
        assert "No bot [redacted] here" in html
        for secret in secrets:
            assert secret.lower() not in html.lower()


async def test_a_secret_pasted_into_the_chat_is_not_shown_in_the_transcript(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """An operator pastes the bot's token by mistake: the console shows the transcript
    without it (the model saw it; an admin looking over a shoulder need not)."""
    anthropic_api.script = [text(f"Noted: {telegram_api.token}.")]
    telegram_api.push_message(f"our token is {telegram_api.token}", user=ALICE)
    await until(lambda: any("Noted" in m.get("text", "") for m in telegram_api.sent()))
    await app.bridge.settle()
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        status, html = await client.get(f"/admin/w/acme/sessions/{acme_session(app)}")
    assert status == 200
    assert telegram_api.token not in html
    assert "our token is [redacted]" in html and "Noted: [redacted]." in html


async def test_a_page_cursor_that_is_not_one_is_refused_with_400_never_500(app: App) -> None:
    """The Older/Newer links' values come back from the address bar: anything else is a 400
    that says what is expected (a 5,000-digit number and a superscript digit were 500s)."""
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        audit = "/admin/w/acme/sessions/ses_anything/audit?older="
        for value in ("9" * 5000, "\u00b2", "-1", "1e3", "99999999999999999999"):
            status, page = await client.get(audit + value)
            assert (status, "must be an event's number" in page) == (400, True), (value, status)
        status, page = await client.get("/admin/w/acme/sessions/ses_anything?older=" + "x" * 200)
        assert (status, "must name a turn" in page) == (400, True)
