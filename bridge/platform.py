"""What the bridge must know of a chat platform, as its adapter provides it.

The bridge keeps the policy (how to split, who is trusted where, the order of routes); the
facts it applies them to come from here: the platform's markup and limits, which of the
admin's config belongs to it, the shape of its ids and how its bot hears a workspace. Adding
a platform is an adapter with a profile, and its part of the config: no bridge file changes,
and no bridge file names a platform.
"""

from __future__ import annotations

from typing import Protocol

from bridge.types import TransportLimits
from config.schema import OperatorConfig, WorkspaceConfig


class PlatformProfile(Protocol):
    @property
    def name(self) -> str:
        """`Route.platform` of its conversations."""
        ...

    @property
    def limits(self) -> TransportLimits: ...

    def render(self, markdown: str) -> str:
        """An answer's markdown in the platform's own markup."""
        ...

    def serves(self, workspace: WorkspaceConfig) -> bool:
        """Whether the workspace's config sets this platform up."""
        ...

    def operator_id(self, workspace: WorkspaceConfig, operator: OperatorConfig) -> str | None:
        """The operator's user id on this platform in this workspace (None: they have none)."""
        ...

    def allows(self, workspace: WorkspaceConfig, conversation_id: str) -> bool:
        """Whether the admin lets operators talk to the agent in this group conversation (a
        DM always is)."""
        ...

    def direct_conversation(
        self, workspace: WorkspaceConfig, operator: OperatorConfig
    ) -> str | None:
        """The conversation id of a direct message to the operator, where the platform has
        one for them."""
        ...

    def paired_operator(self, operator_id: str, user_id: str) -> OperatorConfig:
        """A sender paired with a workspace, known by their user id on this platform, as an
        operator that `operator_id()` finds by that user id (`operator_id`: the name to give
        them, where the platform's user ids are not operator names)."""
        ...

    def listens(self, workspace: WorkspaceConfig) -> str | None:
        """How the bot hears this workspace on the platform, in the admin's words ("polling",
        "socket mode"); None where the workspace does not set the platform up."""
        ...
