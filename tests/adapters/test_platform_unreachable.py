"""A Slack that cannot be reached when Switchboard starts is not called a refused token: the
error names the host, says the token was not checked and that nothing keeps trying (the
same for Telegram is typed as `switchboard run` in test_init.py)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from config.errors import PlatformUnreachable
from tests.adapters.slack_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack


async def test_slack_unreachable_at_start_is_not_a_refused_token(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    with socket.socket() as held:  # bound, never listening: connections are refused
        held.bind(("127.0.0.1", 0))
        down = f"127.0.0.1:{held.getsockname()[1]}"
        with pytest.raises(PlatformUnreachable) as caught:
            await start_app(
                db_path, anthropic_api, slack_api, slack_extra={"api_base_url": f"http://{down}/"}
            )
    said = str(caught.value)
    assert said.startswith(f"workspace acme: could not reach Slack at {down} ("), said
    assert "slack.bot_token was not checked" in said and "does not keep trying" in said
    assert "refused the bot token" not in said
