"""Shared fixtures. No test may reach a real model: the SDK's defaults point at a closed port."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_aiohttp import AiohttpServer

from tests.fakes.anthropic_api import FakeAnthropic


@pytest.fixture(autouse=True)
def _no_real_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")


@pytest.fixture
async def anthropic_api(aiohttp_server: Callable[..., Awaitable[AiohttpServer]]) -> FakeAnthropic:
    fake = FakeAnthropic()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "switchboard.db"


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    """A SQLite file, for a test of SQLite's own mechanics (where `db_path` may be a URL)."""
    return tmp_path / "switchboard.db"


@pytest.fixture
async def cleanup() -> AsyncIterator[list[Any]]:
    """Things with an async close() to close at the end of the test."""
    items: list[Any] = []
    yield items
    for item in reversed(items):
        await item.close()
