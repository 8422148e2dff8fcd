"""Replicas in one test process: two real Apps on one PostgreSQL database (the suite's own
server), each with its own HTTP port, against the fake Slack, Telegram and Anthropic APIs."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from adapters.server.app import App
from bridge.parts import StopFailed
from config import load
from runtime.homes import Share
from tests.adapters.replicas.processes import Replica
from tests.adapters.slack_harness import ACME_SECRET, ALICE, OPS
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.postgres import pg_url

__all__ = ["pg_url"]

TELEGRAM_SECRET = "tg-webhook-secret"
# Not 2 s, the least the config allows (its default is 10 s): a fleet's replicas share one test
# worker's event loop, and in a full run beside a busy core their renewals (every quarter of the
# lease, each given up after a second) once missed a 2 s lease and the active replica stopped.
LEASE_TTL_S = 3.0


@dataclass
class Fleet:
    """Replicas started from one config file; each records why it lost its lease (a real
    process would end there)."""

    config: Path
    apps: list[App] = field(default_factory=list)
    lost: dict[str, str] = field(default_factory=dict)

    async def start(self, name: str) -> App:
        def lost(why: str) -> None:
            self.lost[name] = why

        app = App(
            load(self.config),
            stdin=io.StringIO(),
            stdout=io.StringIO(),
            path=self.config,
            replica=name,
            on_lease_lost=lost,
        )
        await app.start()
        self.apps.append(app)
        return app


def running_on(fleet: Fleet) -> App | None:
    """The replica running a turn now, if one does."""
    running = [a for a in fleet.apps if any(s.running for s in a.runtime.sessions.values())]
    return running[0] if running else None


def runs_no_session(app: App) -> None:
    """The replica claims no session from now on (as one whose share is full): the turns run
    on the others, while it still replays and sends if it is the active one."""
    assert app.runtime.homes is not None
    app.runtime.homes.share = Share(most=0)


def pause(app: App) -> None:
    """The replica stops renewing every lease it holds, as a paused process would (its
    event loop goes on, as a real paused process's would not)."""
    if app.role.leading is not None:
        app.role.leading.cancel()
    assert app.runtime.homes is not None
    for task in app.runtime.homes._tasks:  # its claims and renewals
        task.cancel()


@pytest.fixture
async def fleet(
    pg_url: str,
    tmp_path: Path,
    anthropic_api: FakeAnthropic,
    slack_api: FakeSlack,
    telegram_api: FakeTelegram,
) -> AsyncIterator[Fleet]:
    """Workspace acme on Slack team T1 (HTTP events) and on Telegram (webhook), operator alice
    (Slack UALICE, Telegram 1001)."""
    team = next(t for t in slack_api.teams.values() if t.team_id == "T1")
    alice = {
        "id": "alice",
        "primary": True,
        "slack_user_id": ALICE,
        "telegram_user_id": 1001,
        "notify_via": "slack",
    }
    acme = workspace(
        "acme",
        [alice],
        slack={
            "team_id": "T1",
            "bot_token": team.token,
            "signing_secret": ACME_SECRET,
            "api_base_url": slack_api.base_url,
            "channels": [OPS],
        },
        telegram={
            "bot_token": telegram_api.token,
            "api_base_url": telegram_api.base_url,
            "mode": "webhook",
            "webhook_secret": TELEGRAM_SECRET,
        },
        agent_tools=["notify_operator", "sleep"],
    )
    path = write_config(
        tmp_path / "switchboard.toml",
        db=pg_url,
        provider=anthropic(anthropic_api.url),
        public_url="https://bot.example.com",
        workspaces=[acme],
        storage={"lease_ttl_s": LEASE_TTL_S},
    )
    fleet = Fleet(path)
    yield fleet
    for app in reversed(fleet.apps):
        try:
            await app.stop()
        except StopFailed:
            # A replica that lost its lease (here: a loop stalled past the short lease of a
            # loaded test machine) has its writes refused; a real one exits at once instead
            # of stopping (status 75). Any other replica must stop cleanly.
            if app.replica not in fleet.lost:
                raise


@pytest.fixture
async def replicas() -> AsyncIterator[list[Replica]]:
    """Real replica processes a test starts (`processes.start_replica`), killed at its end."""
    started: list[Replica] = []
    yield started
    for replica in started:
        await replica.stop()
