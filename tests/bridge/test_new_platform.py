"""A platform the bridge has never heard of works through its profile alone: trust, sessions,
splitting at its limit, its markup and routing all come from what the adapter provides
(issue 10: adding a platform touches adapters/ and config/ only)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path

from bridge.admin.view import AdminView
from bridge.platform import PlatformProfile
from bridge.sessions import agent_key
from bridge.transport import Post
from bridge.types import InboundChat, Route, TransportLimits
from bridge.verdicts import Outcome
from config.schema import OperatorConfig, PairingConfig, WorkspaceConfig
from runtime.messages import InboundMessage, MessageKind, Origin, Priority, Trust
from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, config_for, open_bridge
from tests.fakes.anthropic_api import FakeAnthropic, text


@dataclass(frozen=True)
class IrcProfile:
    """Nicknames are `@<operator id>`, `#ops` is the one channel allowed, text is shouted."""

    name: str = "irc"
    limits: TransportLimits = field(default=TransportLimits(max_chars=40))

    def render(self, markdown: str) -> str:
        return markdown.upper()

    def serves(self, workspace: WorkspaceConfig) -> bool:
        return True

    def operator_id(self, workspace: WorkspaceConfig, operator: OperatorConfig) -> str | None:
        return f"@{operator.id}"

    def allows(self, workspace: WorkspaceConfig, conversation_id: str) -> bool:
        return conversation_id == "#ops"

    def direct_conversation(
        self, workspace: WorkspaceConfig, operator: OperatorConfig
    ) -> str | None:
        return f"@{operator.id}"

    def paired_operator(self, operator_id: str, user_id: str) -> OperatorConfig:
        return OperatorConfig(id=user_id.removeprefix("@"))  # a nickname names the operator

    def listens(self, workspace: WorkspaceConfig) -> str | None:
        return "a channel join"


class IrcTransport(RecordingTransport):
    @property
    def profile(self) -> PlatformProfile:
        return IrcProfile()


def irc(line: str, *, sender: str, where: str, n: int) -> InboundChat:
    return InboundChat(
        route=Route(platform="irc", workspace_id="acme", conversation_id=where),
        sender_id=sender,
        dedupe_keys=(f"line:{n}",),
        text=line,
        is_direct=where.startswith("@"),
    )


async def test_an_unknown_platform_is_served_through_its_profile(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    transport = IrcTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    answer = "first paragraph of the answer\n\nand a second one, shouted too"
    anthropic_api.script = [text(answer), text("the nightly report")]
    try:
        assert await bridge.receive(irc("hi", sender="@mallory", where="@mallory", n=1)) is (
            Outcome.REFUSED
        )
        assert await bridge.receive(irc("hi", sender="@alice", where="#random", n=2)) is (
            Outcome.REFUSED
        )
        assert await bridge.receive(irc("hi", sender="@alice", where="#ops", n=3)) is (
            Outcome.PROMPT
        )
        await bridge.settle()
        replies = [s for s in transport.sent if s.route.conversation_id == "#ops"]
        assert [s.text for s in replies] == [
            "FIRST PARAGRAPH OF THE ANSWER",
            "AND A SECOND ONE, SHOUTED TOO",
        ], "split at the profile's 40 characters, rendered in its markup"

        sid = await bridge.runtime.create_session(agent_key("acme", "assistant"))
        tick = InboundMessage(
            "nightly",
            kind=MessageKind.TIMER_TICK,
            origin=Origin.TIMER,
            trust=Trust.TRUSTED_SYSTEM,
            priority=Priority.NORMAL,
        )
        await bridge.runtime.submit(sid, tick)
        await bridge.settle()
        assert transport.sent[-1].route.conversation_id == "@alice", "the primary's DM there"
        assert transport.sent[-1].text == "THE NIGHTLY REPORT"

        bridge.metrics.connection("irc", "acme", up=True)
        [connection] = AdminView(bridge, bridge.config).connections(bridge.config.workspaces[0])
        assert connection.mode == "a channel join", "the admin's view asks the profile"
    finally:
        await close_bridge(bridge)


def said(sent: list[Post], to: str) -> str:
    return " ".join(s.text for s in sent if s.route.conversation_id == to)


async def test_a_stranger_there_pairs_through_its_profile(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    """Pairing knows the platform only by its profile: the code goes to the stranger, the
    primary operator approves it there, and the stranger is heard from their next message."""
    config = config_for(db_path, anthropic_api)
    acme = config.workspaces[0].model_copy(update={"pairing": PairingConfig(enabled=True)})
    transport = IrcTransport()
    bridge = await open_bridge(config.model_copy(update={"workspaces": [acme]}), transport)
    anthropic_api.script = [text("hello bob")]
    try:
        assert await bridge.receive(irc("hi", sender="@bob", where="@bob", n=1)) is (
            Outcome.REFUSED
        )
        await bridge.outbox.idle()
        found = re.search(r"PAIRING CODE IS ([A-Z0-9]{8})", said(transport.sent, "@bob"))
        assert found is not None, said(transport.sent, "@bob")
        code = found.group(1)
        assert code in said(transport.sent, "@alice"), "the primary operator is asked"
        approve = irc(f"/approve {code}", sender="@alice", where="@alice", n=2)
        assert await bridge.receive(approve) is Outcome.COMMAND
        assert await bridge.receive(irc("hi again", sender="@bob", where="@bob", n=3)) is (
            Outcome.PROMPT
        )
        await bridge.settle()
        assert "HELLO BOB" in said(transport.sent, "@bob")
    finally:
        await close_bridge(bridge)


async def test_two_messages_of_one_stranger_at_once_get_one_refusal(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    """The replay hands conversations on side by side: a stranger writing in two places at
    once is still told once an hour, not once a place."""
    transport = IrcTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    try:
        lines = [irc("let me in", sender="@mallory", where="@mallory", n=n) for n in (1, 2, 3)]
        outcomes = await asyncio.gather(*(bridge.receive(line) for line in lines))
        assert outcomes == [Outcome.REFUSED] * 3
        await bridge.outbox.idle()
        told = {s.intent_id for s in transport.sent if s.route.conversation_id == "@mallory"}
        assert len(told) == 1, "one refusal (in chunks of the platform's 40 characters)"
    finally:
        await close_bridge(bridge)
