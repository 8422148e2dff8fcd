"""A message held for its files whose submit fails (the disk, the database) is tried again
while later messages wait behind it, and given up after a few tries with the sender told;
never stuck, never silently dropped."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.telegram_harness import replies, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.telegram_api import FakeTelegram
from tests.files_samples import png
from tests.runtime.helpers import until


def photo(telegram: FakeTelegram) -> list[dict[str, Any]]:
    stored = telegram.files.add(png(), "photos", "png")
    return [{**stored, "width": 64, "height": 64}]


async def test_a_submit_that_fails_once_is_tried_again_and_answered_once(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    anthropic_api.script = [text("Got the picture.")]
    app = await start_app(db_path, anthropic_api, telegram_api)
    submit, calls = app.runtime.submit, []

    async def disk_trouble_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) == 1:
            raise sqlite3.OperationalError("disk I/O error")
        return await submit(*args, **kwargs)

    monkeypatch.setattr(app.runtime, "submit", disk_trouble_once)
    try:
        telegram_api.push_message(None, user=1001, photo=photo(telegram_api), caption="look")
        await until(lambda: bool(replies(telegram_api, 1001)))
        await app.bridge.settle()
    finally:
        await app.stop()
    assert [m["text"] for m in replies(telegram_api, 1001)] == ["Got the picture."]
    assert len(anthropic_api.requests) == 1 and len(calls) == 2


async def test_a_submit_that_keeps_failing_is_given_up_and_said(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = await start_app(db_path, anthropic_api, telegram_api)

    async def disk_trouble(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(app.runtime, "submit", disk_trouble)
    try:
        telegram_api.push_message(None, user=1001, photo=photo(telegram_api), caption="look")
        await until(lambda: bool(replies(telegram_api, 1001)), wait_s=15)
        await app.bridge.settle()
    finally:
        await app.stop()
    [told] = [m["text"] for m in replies(telegram_api, 1001)]
    assert told.startswith("Your message and its files could not be passed to the agent")
    assert "OperationalError" in told and "disk" not in told
    app = await start_app(db_path, anthropic_api, telegram_api)  # nothing is held any more
    try:
        await app.bridge.settle()
    finally:
        await app.stop()
    assert anthropic_api.requests == [] and len(replies(telegram_api, 1001)) == 1
