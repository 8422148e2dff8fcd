"""The toy as the bridge sees it (its text shouted, its rooms, `@<id>` for a DM) and its bot,
which hands a stored line to the bridge."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from adapters.bots import PlatformKind
from adapters.intake.record import Put
from bridge.platform import PlatformProfile
from bridge.service import Bridge
from bridge.store.records import StoredRequest
from bridge.types import InboundChat, Route, TransportLimits
from config.schema import OperatorConfig, WorkspaceConfig
from tests.adapters.toy_platform.settings import TOY_SECTION
from tests.bridge.fakes import RecordingTransport


@dataclass(frozen=True)
class ToyProfile:
    name: str = "toy"
    limits: TransportLimits = field(default=TransportLimits(max_chars=400))

    def render(self, markdown: str) -> str:
        return markdown.upper()

    def serves(self, workspace: WorkspaceConfig) -> bool:
        return TOY_SECTION.of(workspace) is not None

    def operator_id(self, workspace: WorkspaceConfig, operator: OperatorConfig) -> str | None:
        user = TOY_SECTION.user(operator)
        return f"@{user}" if user else None

    def allows(self, workspace: WorkspaceConfig, conversation_id: str) -> bool:
        toy = TOY_SECTION.of(workspace)
        return toy is not None and conversation_id in toy.rooms

    def direct_conversation(
        self, workspace: WorkspaceConfig, operator: OperatorConfig
    ) -> str | None:
        return self.operator_id(workspace, operator)

    def paired_operator(self, operator_id: str, user_id: str) -> OperatorConfig:
        return OperatorConfig.model_validate(
            {"id": operator_id, "toy_user_id": user_id.removeprefix("@")}
        )

    def listens(self, workspace: WorkspaceConfig) -> str | None:
        return "webhook" if self.serves(workspace) else None


class ToyTransport(RecordingTransport):
    @property
    def profile(self) -> PlatformProfile:
        return ToyProfile()


class ToyBot:
    def __init__(self, bridge: Bridge, workspace: WorkspaceConfig, put: Put) -> None:
        self._bridge = bridge
        self._workspace = workspace
        self.transport = ToyTransport()
        self.files = None
        self.running = False

    async def start(self, public_url: str | None) -> None:
        self.running = True

    async def stop(self) -> None:
        self.running = False

    async def decode(self, request: StoredRequest) -> None:
        line = json.loads(request.body)
        where = line["where"]
        route = Route(platform="toy", workspace_id=self._workspace.id, conversation_id=where)
        chat = InboundChat(
            route=route,
            sender_id=line["from"],
            dedupe_keys=(f"line:{line['n']}",),
            text=line["text"],
            is_direct=where.startswith("@"),
        )
        await self._bridge.receive(chat)


TOY_BOTS = PlatformKind(ToyProfile(), ToyBot, None)
