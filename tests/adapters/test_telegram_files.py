"""Files in, on Telegram: photos, images, PDFs and text files sent to the bot reach the model
(the anthropic SDK against the fake Messages API, which enforces the image and document
rules) with their caption; downloaded through python-telegram-bot from the fake Bot API's
`getFile` and `/file/bot<token>/<path>`; what is not passed on is said; a stranger's files are
never downloaded; a download cut off by a stop resumes on the next start, answered once."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from adapters.server.app import App
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.telegram_api import FakeTelegram
from tests.files_samples import jpeg, pdf, png
from tests.runtime.helpers import until
from tests.topology import Topology


@pytest.fixture
async def app(
    topology: Topology, db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    """Files come in polled by the door process, or by this one: on each topology."""
    yield await start_app(db_path, anthropic_api, telegram_api, topology=topology)
    await topology.stop()  # while the fakes still answer


def photo_sizes(telegram: FakeTelegram) -> tuple[list[dict[str, Any]], bytes]:
    """A photo as Telegram sends it: the same picture in three sizes, smallest first."""
    sizes = []
    for width, height in ((90, 51), (320, 180), (1280, 720)):
        data = jpeg(width, height)
        sizes.append(
            {**telegram.files.add(data, "photos", "jpg"), "width": width, "height": height}
        )
    return sizes, data


def document(
    telegram: FakeTelegram, data: bytes, name: str, mime: str, **kw: Any
) -> dict[str, Any]:
    return {
        **telegram.files.add(data, "documents", name.rsplit(".", 1)[-1], **kw),
        "file_name": name,
        "mime_type": mime,
    }


def user_content(anthropic: FakeAnthropic, request: int = 0) -> list[dict[str, Any]]:
    [message] = [m for m in anthropic.requests[request]["messages"] if m["role"] == "user"][:1]
    return list(message["content"])


async def test_a_photo_reaches_the_model_as_an_image_with_its_caption(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("A red square.")]
    sizes, largest = photo_sizes(telegram_api)
    telegram_api.push_message(None, user=1001, **{"photo": sizes, "caption": "what is it?"})
    await until(lambda: bool(replies(telegram_api, 1001)))
    assert replies(telegram_api, 1001)[0]["text"] == "A red square."
    label, image, caption = user_content(anthropic_api)
    assert label["text"].startswith("[File: photo.jpg (image/jpeg")
    assert image["type"] == "image" and image["source"]["media_type"] == "image/jpeg"
    assert base64.b64decode(image["source"]["data"]) == largest, "the largest size"
    assert caption["text"] == "what is it?"
    assert [c["file_id"] for c in telegram_api.sent("getFile")] == [sizes[-1]["file_id"]]
    assert telegram_api.files.downloads == [telegram_api.files.stored[sizes[-1]["file_id"]][0]]
    assert telegram_api.refused == [] and anthropic_api.refused == []


async def test_a_photo_too_large_falls_back_to_a_smaller_size(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    sizes, _ = photo_sizes(telegram_api)
    big = jpeg(2560, 1440)
    sizes.append(
        {
            **telegram_api.files.add(big, "photos", "jpg", size=6 * 1024 * 1024),
            "width": 2560,
            "height": 1440,
        }
    )
    app = await start_app(db_path, anthropic_api, telegram_api)
    try:
        telegram_api.push_message(None, user=1001, **{"photo": sizes})
        await until(lambda: bool(replies(telegram_api, 1001)))
    finally:
        await app.stop()
    [image] = [b for b in user_content(anthropic_api) if b["type"] == "image"]
    assert base64.b64decode(image["source"]["data"]) == jpeg(1280, 720)
    assert [c["file_id"] for c in telegram_api.sent("getFile")] == [sizes[2]["file_id"]]


async def test_a_pdf_an_image_file_and_a_code_file(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    paper = pdf(3)
    telegram_api.push_message(
        None,
        user=1001,
        **{
            "document": document(telegram_api, paper, "report.pdf", "application/pdf"),
            "caption": "summarize",
        },
    )
    await until(lambda: len(replies(telegram_api, 1001)) == 1)
    label, doc, caption = user_content(anthropic_api, 0)
    assert label["text"] == f"[File: report.pdf (application/pdf, {len(paper)} bytes)]"
    assert doc["type"] == "document" and doc["title"] == "report.pdf"
    assert doc["source"] == {
        "type": "base64",
        "media_type": "application/pdf",
        "data": base64.b64encode(paper).decode(),
    }
    assert caption["text"] == "summarize"

    picture = png(640, 480)
    telegram_api.push_message(
        None,
        user=1001,
        **{"document": document(telegram_api, picture, "chart.png", "image/png")},
    )
    await until(lambda: len(replies(telegram_api, 1001)) == 2)
    image = anthropic_api.requests[1]["messages"][-1]["content"]
    assert [b["type"] for b in image][-2:] == ["text", "image"], "no caption: the file alone"
    assert image[-1]["source"]["media_type"] == "image/png"

    code = b"def add(a, b):\n    return a + b\n"
    telegram_api.push_message(
        None,
        user=1001,
        **{
            "document": document(telegram_api, code, "calc.py", "text/x-python"),
            "caption": "review this",
        },
    )
    await until(lambda: len(replies(telegram_api, 1001)) == 3)
    blocks = anthropic_api.requests[2]["messages"][-1]["content"]
    [file_text] = [b for b in blocks if b["type"] == "text" and "calc.py" in b["text"]]
    assert file_text["text"].startswith("[File: calc.py (text/x-python, 32 bytes)]")
    assert code.decode() in file_text["text"]
    assert blocks[-1]["text"].startswith("review this")
    assert anthropic_api.refused == [] and telegram_api.refused == []


async def test_what_is_not_passed_on_is_said_and_the_rest_goes_through(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("Noted.")]
    voice = {
        **telegram_api.files.add(b"OggS....", "voice", "oga"),
        "duration": 3,
        "mime_type": "audio/ogg",
    }
    telegram_api.push_message(None, user=1001, **{"voice": voice, "caption": "listen"})
    await until(lambda: len(replies(telegram_api, 1001)) == 2)
    texts = [m["text"] for m in replies(telegram_api, 1001)]
    assert (
        "Not passed to the agent: a voice message (the agent can't read voice messages)." in texts
    )
    assert "Noted." in texts
    assert user_content(anthropic_api)[-1]["text"] == "listen"

    huge = document(telegram_api, png(), "scan.png", "image/png", size=6 * 1024 * 1024)
    telegram_api.push_message(None, user=1001, **{"document": huge})
    await until(lambda: len(replies(telegram_api, 1001)) == 3)
    assert replies(telegram_api, 1001)[2]["text"] == (
        "Not passed to the agent: scan.png (6.0 MB, over the 5.0 MB limit for image files). "
        "There was nothing else in your message, so the agent got nothing."
    )
    assert len(anthropic_api.requests) == 1
    assert telegram_api.sent("getFile") == [], "neither the voice note nor the big file"


async def test_a_strangers_photo_is_never_downloaded(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    sizes, _ = photo_sizes(telegram_api)
    telegram_api.push_message(None, user=666, **{"photo": sizes, "caption": "look"})
    await until(lambda: bool(replies(telegram_api, 666)))
    assert replies(telegram_api, 666)[0]["text"].startswith("You are not an operator")
    assert telegram_api.sent("getFile") == [] and telegram_api.files.downloads == []
    assert anthropic_api.requests == []


async def test_a_download_cut_off_resumes_after_a_restart_and_is_answered_once(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.script = [text("Got the picture.")]
    sizes, largest = photo_sizes(telegram_api)
    telegram_api.fail("getFile", 200, stall_s=3.0)  # answered too late: the process stops first
    app = await start_app(db_path, anthropic_api, telegram_api)
    telegram_api.push_message(None, user=1001, **{"photo": sizes, "caption": "keep this"})
    try:
        await until(lambda: bool(telegram_api.sent("getFile")))
    finally:
        await app.stop()
    assert anthropic_api.requests == [] and replies(telegram_api, 1001) == []
    app = await start_app(db_path, anthropic_api, telegram_api)
    try:
        await until(lambda: bool(replies(telegram_api, 1001)))
        await app.bridge.settle()
    finally:
        await app.stop()
    assert [m["text"] for m in replies(telegram_api, 1001)] == ["Got the picture."]
    assert len(anthropic_api.requests) == 1
    assert len(telegram_api.sent("getFile")) == 2, "asked again after the restart"
    [image] = [b for b in user_content(anthropic_api) if b["type"] == "image"]
    assert base64.b64decode(image["source"]["data"]) == largest


async def test_the_fake_serves_a_file_only_for_the_bots_token(telegram_api: FakeTelegram) -> None:
    stored = telegram_api.files.add(png(), "documents", "png")
    path = telegram_api.files.stored[stored["file_id"]][0]
    async with aiohttp.ClientSession() as http:
        wrong = f"{telegram_api.url}/file/bot123:WRONG/{path}"
        async with http.get(wrong) as response:
            assert response.status == 404
        right = f"{telegram_api.url}/file/bot{telegram_api.token}/{path}"
        async with http.get(right) as response:
            assert response.status == 200 and await response.read() == png()
