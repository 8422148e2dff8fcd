"""The context window: the Models API's `max_input_tokens` for the model, asked once at
start; the config's `context_window` over it; the name's table when the API cannot tell."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from runtime.results import RuntimeSettings
from tests.fakes.anthropic_api import MODELS, FakeAnthropic
from tests.runtime.helpers import open_runtime


async def window(db_path: Path, fake: FakeAnthropic, cleanup: list[object], **kw: int) -> int:
    rt = await open_runtime(db_path, fake, settings=RuntimeSettings(**kw))
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    return rt.status(sid).context_window


async def test_the_window_is_the_models_api_s(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.context_window = 1_000_000  # a model with a million-token window
    assert await window(db_path, anthropic_api, cleanup) == 1_000_000


async def test_a_configured_window_wins(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.context_window = 1_000_000
    assert await window(db_path, anthropic_api, cleanup, context_window=50_000) == 50_000


async def test_when_the_api_cannot_tell_the_table_s_window_stays(
    anthropic_api: FakeAnthropic,
    db_path: Path,
    cleanup: list[object],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    anthropic_api.context_window = 1_000_000
    monkeypatch.delitem(MODELS, "claude-test-model")  # the API answers 404 for it
    with caplog.at_level(logging.WARNING):
        assert await window(db_path, anthropic_api, cleanup) == 200_000
    assert any("context window not known" in r.getMessage() for r in caplog.records)
