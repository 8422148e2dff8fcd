"""Files in, on Slack: a `file_share` message (as Slack sends it, signed, through slack-bolt)
reaches the model with its text, the files downloaded from `url_private_download` with the
bot token (the fake redirects to its login page without it); the event is acknowledged before
any download; a stranger's files are never downloaded; `files.info` gives a URL the event
left out."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from adapters.server.app import App
from tests.adapters.slack_harness import ALICE, MALLORY, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.files_samples import pdf, png
from tests.runtime.helpers import until
from tests.topology import Topology


@pytest.fixture
async def app(
    topology: Topology, db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> AsyncIterator[App]:
    """Files come through the public port: on each topology (tests/topology.py)."""
    yield await start_app(db_path, anthropic_api, slack_api, topology=topology)
    await topology.stop()  # while the fakes still answer


async def test_an_image_shared_in_a_dm_reaches_the_model_with_the_message(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("A tiny picture.")]
    picture = png(64, 48)
    shared = slack_api.files.add("T1", ALICE, "screenshot.png", "image/png", picture)
    await slack.say("what is this?", subtype="file_share", files=[shared], upload=False)
    await until(lambda: bool(slack_api.posts("DALICE")))
    assert slack_api.posts("DALICE")[0]["text"] == "A tiny picture."
    label, image, words = anthropic_api.requests[0]["messages"][0]["content"]
    assert label["text"].startswith("[File: screenshot.png (image/png")
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == picture
    assert words["text"] == "what is this?"
    [download] = slack_api.files.downloads
    assert download.team == "T1" and "/download/screenshot.png" in download.path
    assert slack_api.refused == [] and anthropic_api.refused == []


async def test_the_event_is_acknowledged_before_the_download(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    gate = asyncio.Event()
    slack_api.files.gate = gate
    paper = pdf(2)
    notes = b"- deploy at 5\n- page bob\n"
    files = [
        slack_api.files.add("T1", ALICE, "plan.pdf", "application/pdf", paper),
        slack_api.files.add("T1", ALICE, "notes.md", "text/markdown", notes, "markdown"),
    ]
    try:
        await slack.say("", subtype="file_share", files=files, upload=False)  # answered 200
        await until(lambda: bool(slack_api.files.downloads))  # downloading after the ack
        assert anthropic_api.requests == []
        [held] = await app.bridge.store.held()
    finally:
        gate.set()
    await until(lambda: bool(slack_api.posts("DALICE")))
    assert await app.bridge.store.held() == [] and held.platform == "slack"
    content = anthropic_api.requests[0]["messages"][0]["content"]
    assert [b["type"] for b in content] == ["text", "document", "text"]
    assert content[1]["title"] == "plan.pdf"
    assert content[2]["text"].startswith("[File: notes.md (text/markdown, ")
    assert notes.decode() in content[2]["text"]


async def test_a_strangers_file_is_never_downloaded(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    shared = slack_api.files.add("T1", MALLORY, "x.png", "image/png", png())
    await slack.say("look", user=MALLORY, channel="DMALLORY", subtype="file_share", files=[shared])
    await until(lambda: bool(slack_api.posts("DMALLORY")))
    assert slack_api.posts("DMALLORY")[0]["text"].startswith("You are not an operator")
    assert slack_api.files.downloads == [] and slack_api.method_calls("files.info") == []
    assert anthropic_api.requests == []


async def test_a_file_the_event_describes_in_part_is_found_with_files_info(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    full = slack_api.files.add("T1", ALICE, "config.yaml", "text/plain", b"replicas: 3\n", "yaml")
    partial = {"id": full["id"], "mode": "hosted", "file_access": "check_file_info"}
    await slack.say("check it", subtype="file_share", files=[partial])
    await until(lambda: bool(slack_api.posts("DALICE")))
    assert slack_api.method_calls("files.info") == [{"file": full["id"]}]
    blocks = anthropic_api.requests[0]["messages"][0]["content"]
    assert "replicas: 3" in blocks[0]["text"] and blocks[-1]["text"] == "check it"


async def test_the_fake_sends_a_request_without_the_token_to_the_login_page(
    slack_api: FakeSlack,
) -> None:
    shared = slack_api.files.add("T1", ALICE, "a.png", "image/png", png())
    async with aiohttp.ClientSession() as http:
        for headers in ({}, {"Authorization": "Bearer xoxb-test-t2"}):
            async with http.get(
                shared["url_private"], headers=headers, allow_redirects=False
            ) as response:
                assert response.status == 302 and "redir=" in response.headers["Location"]
        bearer = {"Authorization": "Bearer xoxb-test-t1"}
        async with http.get(shared["url_private_download"], headers=bearer) as response:
            assert response.status == 200 and await response.read() == png()


async def test_a_message_sent_while_a_file_downloads_does_not_overtake_it(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    gate = asyncio.Event()
    slack_api.files.gate = gate
    shared = slack_api.files.add("T1", ALICE, "first.png", "image/png", png())
    try:
        await slack.say("first, with a file", subtype="file_share", files=[shared])
        await slack.say("second, right after")
        await slack.say("/status")  # a command is not held: answered at once
        await until(lambda: bool(slack_api.posts("DALICE")))
        assert slack_api.posts("DALICE")[0]["text"].startswith("No session here yet")
        assert [m.message.text for m in await app.runtime.store.messages()] == []
    finally:
        gate.set()
    stored: list[str | None] = []
    for _ in range(500):  # behind a standby replica, the active one takes them
        stored = [m.message.text for m in await app.runtime.store.messages()]
        if len(stored) >= 2:
            break
        await asyncio.sleep(0.02)
    assert stored == ["first, with a file", "second, right after"]
    await until(lambda: len(anthropic_api.requests) >= 1)
    first = anthropic_api.requests[0]["messages"][0]["content"]
    assert first[1]["type"] == "image" and "first, with a file" in first[2]["text"]
