"""A chat platform as one object: everything only it knows, from its own package, registered
once (`adapters/platforms.py`). The door process, the main process, the config, `init`,
`check-config` and the console take what they need of it and never name a platform.

The door process imports its door alone (`adapters/doors/registry.py`); its bots, which load
the platform's SDK, are imported only when the main process runs them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pydantic import BaseModel

from adapters.bots import PlatformKind
from adapters.intake.door import DoorKind
from adapters.platform_setup import SetupKind
from config.platform_sections import PlatformSection
from config.schema import SwitchboardConfig, WorkspaceConfig

Probe = tuple[str, Callable[[], Awaitable[str]]]
"""A credential of the workspace's section (`telegram.bot_token`), and what finds whose it is
(raising `CredentialRefused` or `PlatformUnreachable`)."""


@dataclass(frozen=True, slots=True)
class PageFacts:
    """What the console's settings page shows of its section, besides what the section names
    (its operators' `<name>_user_id`, its allow list): the page never names a platform."""

    facts: Callable[[WorkspaceConfig], list[tuple[str, str]]]
    """The workspace's section in a few words, as (what, value): `("Slack team", "T1")`."""
    secrets: tuple[str, ...]
    """The section's keys that hold a secret, shown masked when set: `("bot_token",)`."""
    allowed: str
    """Its allow list's label: "Allowed Slack channels (ids, comma-separated)"."""


@dataclass(frozen=True, slots=True)
class Platform:
    name: str
    section: PlatformSection[BaseModel]
    """Its `[workspaces.<name>]` and its operators' `<name>_user_id`, learned by the config."""
    door: DoorKind
    bots: Callable[[], PlatformKind]
    """Its profile and how to make one workspace's bot: loaded when called."""
    probes: Callable[[WorkspaceConfig], list[Probe]]
    """`check-config --probe`: the workspace's credentials to try."""
    describe: Callable[[WorkspaceConfig, SwitchboardConfig], list[str]]
    """`check-config`: what its section of the workspace runs, a line each."""
    setup: SetupKind
    """What `switchboard init` asks of it."""
    page: PageFacts
    """What the console's settings page shows of it."""
