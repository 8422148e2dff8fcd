"""Issue 45 (CPU per turn): slack_sdk and bolt build a debug line (each call's request and
response, each middleware's name) whenever their logger's own level is unset, whether or not
it is written. The adapter's loggers are given the level they log at, so a turn's Slack calls
build none that logging would drop, and write them all where logging asks for debug."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.slack.adapter import SDK_LOGGER
from tests.adapters.slack_harness import OPS, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until

BOLT_LOGGER = "slack_bolt.acme"


@pytest.fixture
def unset() -> Iterator[None]:
    """The loggers as a fresh process has them (a test before may have leveled them)."""
    loggers = [logging.getLogger(n) for n in ("", SDK_LOGGER, BOLT_LOGGER)]
    levels = [logger.level for logger in loggers]
    for logger in loggers[1:]:
        logger.setLevel(logging.NOTSET)
    yield
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)


@pytest.mark.parametrize("level", [logging.INFO, logging.DEBUG])
async def test_a_turn_s_slack_calls_build_the_debug_lines_logging_writes_and_no_other(
    unset: None,
    level: int,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    slack_api: FakeSlack,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    logging.getLogger().setLevel(level)
    built: list[tuple[str, str]] = []
    for name in (SDK_LOGGER, BOLT_LOGGER):
        logger = logging.getLogger(name)
        monkeypatch.setattr(logger, "debug", lambda msg, *a, n=name, **k: built.append((n, msg)))
    anthropic_api.script = [text("fine")]
    app = await start_app(db_path, anthropic_api, slack_api)
    try:
        await SlackSide(app, slack_api).say("deploy status?", channel=OPS)
        await until(lambda: len(slack_api.posts(OPS)) == 1)
    finally:
        await app.stop()
    # bolt asks for one line whatever the level ("Checking listener: ..."): not one it guards
    guarded = [
        (name, msg)
        for name, msg in built
        if name == SDK_LOGGER or msg.startswith("Applying ")  # each call; each middleware
    ]
    if level == logging.DEBUG:
        assert {name for name, _ in guarded} == {SDK_LOGGER, BOLT_LOGGER}, built
    else:
        assert guarded == []
