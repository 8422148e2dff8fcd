"""Each workspace's platform side on one replica (`adapters/server/workspace_leases.py`): two
workspaces over two replicas are served one on each, whatever door a request came in by; a
workspace's answers are sent by the replica serving it, its Telegram bot is polled there only
(Telegram answers two pollers of one bot with 409), and when that replica stops, the other
takes the workspace over and answers on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest

from adapters.server.app import App
from adapters.server.status_cli import status
from bridge import ledger_followers, outbox
from bridge.store.records import Intent
from bridge.types import DeliveryKind, Route
from config import load
from runtime.errors import LeaseLostError
from tests.adapters.replicas.conftest import LEASE_TTL_S, Fleet
from tests.adapters.slack_harness import ACME_SECRET, ALICE, BOB, GLOBEX_SECRET, SlackSide
from tests.adapters.slack_harness import globex_workspace as globex
from tests.adapters.telegram_harness import replies
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

TAKE_OVER_S = 4 * LEASE_TTL_S + 10  # the lease's time, a claim round, a loaded machine


def two_workspaces(
    path: Path, db: str, anthropic_api: FakeAnthropic, slack: FakeSlack, telegram: FakeTelegram
) -> Path:
    """acme on Slack team T1 and on Telegram (polled), operator alice; globex on team T2,
    operator bob."""
    team = next(t for t in slack.teams.values() if t.team_id == "T1")
    alice = {"id": "alice", "primary": True, "slack_user_id": ALICE, "telegram_user_id": 1001}
    acme = workspace(
        "acme",
        [alice],
        slack={
            "team_id": "T1",
            "bot_token": team.token,
            "signing_secret": ACME_SECRET,
            "api_base_url": slack.base_url,
        },
        telegram={
            "bot_token": telegram.token,
            "api_base_url": telegram.base_url,
            "mode": "polling",
        },
    )
    return write_config(
        path,
        db=db,
        provider=anthropic(anthropic_api.url),
        workspaces=[acme, globex(slack)],
        storage={"lease_ttl_s": LEASE_TTL_S},
    )


def sent_by(app: App, sent: dict[str, list[str]]) -> None:
    """Record, by replica, the workspace of each delivery its outbox sends."""
    deliver: Callable[[Intent], Awaitable[None]] = app.bridge.outbox._deliver

    async def recorded(intent: Intent) -> None:
        sent.setdefault(app.replica, []).append(intent.route.workspace_id)
        await deliver(intent)

    app.bridge.outbox._deliver = recorded  # type: ignore[method-assign]


def serving(fleet: Fleet) -> dict[str, list[str]]:
    return {a.replica: a.bridge.placement.served() for a in fleet.apps}


def answered(slack: FakeSlack, words: str) -> int:
    """How many messages of the bot alice and bob see that say `words`."""
    return sum(words in shown for chat in ("DALICE", "DBOB") for shown in slack.shown(chat))


def told_on_telegram(telegram: FakeTelegram, words: str) -> bool:
    return any(words in m["text"] for m in replies(telegram, 1001))


async def test_two_workspaces_on_two_replicas_are_served_one_on_each_and_move_on_a_stop(
    fleet: Fleet,
    tmp_path: Path,
    pg_url: str,
    anthropic_api: FakeAnthropic,
    slack_api: FakeSlack,
    telegram_api: FakeTelegram,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ledger_followers, "KEEP_EVERY", 5)

    def respond(body: dict[str, object]) -> Reply:
        asked = [w for w in str(body["messages"]).split("'") if w.startswith("q-")]
        return text("answer " + asked[-1])  # the newest question

    anthropic_api.responder = respond
    fleet.config = two_workspaces(
        tmp_path / "two.toml", pg_url, anthropic_api, slack_api, telegram_api
    )
    a = await fleet.start("replica-a")
    await until(lambda: a.bridge.placement.served() == ["acme", "globex"], TAKE_OVER_S)
    b = await fleet.start("replica-b")
    # b joins: a is over its share (one each) and lets one go once held long enough.
    await until(lambda: all(len(w) == 1 for w in serving(fleet).values()), TAKE_OVER_S)
    holder = {w: app for app in fleet.apps for w in app.bridge.placement.served()}
    said = await status(load(fleet.config))  # `switchboard status`, and each replica's health
    for workspace_id, app in holder.items():
        assert f"Workspace {workspace_id} (its bots on replica {app.replica}):" in said, said
    for app in fleet.apps:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{app.port}/healthz") as health,
        ):
            assert (await health.json())["workspaces"] == app.bridge.placement.served()
    sent: dict[str, list[str]] = {}
    for app in fleet.apps:
        sent_by(app, sent)

    # Every request comes in by b's door: each is handled where its workspace is served.
    side = SlackSide(b, slack_api)
    await side.say("q-acme-1", team="T1", secret=ACME_SECRET)
    await side.say("q-globex-1", team="T2", secret=GLOBEX_SECRET, user=BOB, channel="DBOB")
    telegram_api.push_message("q-acme-telegram", user=1001)
    await until(lambda: answered(slack_api, "answer q-acme-1") == 1, 30)
    await until(lambda: answered(slack_api, "answer q-globex-1") == 1, 30)
    await until(lambda: told_on_telegram(telegram_api, "answer q-acme-telegram"), 30)
    assert set(sent[holder["acme"].replica]) == {"acme"}, "acme's answers sent where it is served"
    assert set(sent[holder["globex"].replica]) == {"globex"}
    assert telegram_api.pollers.conflicts == 0, "acme's bot polled on one replica only"

    # The replica serving acme stops: the other takes acme over and answers its operators.
    stopping = holder["acme"]
    other = b if stopping is a else a
    await stopping.stop()
    fleet.apps.remove(stopping)
    await until(lambda: other.bridge.placement.served() == ["acme", "globex"], TAKE_OVER_S)
    await SlackSide(other, slack_api).say("q-acme-2", team="T1", secret=ACME_SECRET)
    await until(lambda: answered(slack_api, "answer q-acme-2") == 1, 30)
    telegram_api.push_message("q-acme-telegram-2", user=1001)
    await until(lambda: told_on_telegram(telegram_api, "answer q-acme-telegram-2"), 30)
    for words in ("answer q-acme-1", "answer q-globex-1", "answer q-acme-2"):
        assert answered(slack_api, words) == 1, f"{words!r} answered once"
    assert telegram_api.pollers.conflicts == 0
    assert anthropic_api.refused == []
    # Every follower's cursor moves on, though events of no workspace need no write: what
    # the whole fleet has dispatched may be pruned.
    handled = await other.bridge.followers.handled_everywhere(["acme", "globex"])
    assert handled > 0


async def test_what_another_replica_stores_to_send_goes_out_at_once_where_it_is_served(
    fleet: Fleet, slack_api: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delivery stored on a replica that does not serve its workspace (a console action, a
    budget's notice from a turn running there) is sent by the one that does, at its hint:
    not after the backstop's look around, made far longer here."""
    monkeypatch.setattr(outbox, "LOOK_AROUND_S", 600.0)
    a = await fleet.start("replica-a")
    await until(lambda: a.bridge.placement.served() == ["acme"], TAKE_OVER_S)
    b = await fleet.start("replica-b")
    assert b.bridge.placement.served() == []
    route = Route(platform="slack", workspace_id="acme", conversation_id="DALICE")
    async with b.bridge.store.write() as tx:
        tx.enqueue("dlv_from_b", route, DeliveryKind.COMMAND_REPLY, "stored on b, sent by a")
    await until(lambda: answered(slack_api, "stored on b, sent by a") == 1, 10)


async def test_a_paused_replica_whose_workspace_moved_has_its_late_writes_refused(
    fleet: Fleet,
) -> None:
    """A replica paused past its workspace's lease (it renews nothing, as a stopped process
    would not) wakes up still thinking it serves the workspace: the replica that took it
    over serves it now, and whatever the paused one writes for it is refused whole."""
    a = await fleet.start("replica-a")
    await until(lambda: a.bridge.placement.served() == ["acme"], TAKE_OVER_S)
    b = await fleet.start("replica-b")
    assert a.workspace_leases is not None
    for task in a.workspace_leases._tasks:  # its renewals and claims stop
        task.cancel()
    await until(lambda: b.bridge.placement.served() == ["acme"], TAKE_OVER_S)
    assert a.bridge.placement.served() == ["acme"], "the paused replica has not noticed"
    route = Route(platform="slack", workspace_id="acme", conversation_id="DALICE")
    with pytest.raises(LeaseLostError), a.bridge.placement.fenced("acme"):
        async with a.bridge.store.write() as tx:
            tx.enqueue("dlv_late", route, DeliveryKind.COMMAND_REPLY, "a late reply")
    assert [i.id for i in await b.bridge.store.intents()] == []
    fleet.lost[a.replica] = "paused past its workspace's lease"  # its stop may be refused too
