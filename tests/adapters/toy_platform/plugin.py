"""The toy as one platform: what `register` takes."""

from __future__ import annotations

from adapters.platform import PageFacts, Platform
from config.schema import SwitchboardConfig, WorkspaceConfig
from tests.adapters.toy_platform.bots import TOY_BOTS
from tests.adapters.toy_platform.door import TOY_DOOR
from tests.adapters.toy_platform.probe import probes
from tests.adapters.toy_platform.settings import TOY_SECTION
from tests.adapters.toy_platform.setup import TOY_SETUP


def _describe(workspace: WorkspaceConfig, config: SwitchboardConfig) -> list[str]:
    toy = TOY_SECTION.of(workspace)
    return [] if toy is None else [f"  toy rooms: {', '.join(toy.rooms) or 'none'}"]


def _facts(workspace: WorkspaceConfig) -> list[tuple[str, str]]:
    return [] if TOY_SECTION.of(workspace) is None else [("Toy", "on")]


TOY_PAGE = PageFacts(_facts, ("token",), "Allowed Toy rooms (comma-separated)")
TOY_PLATFORM = Platform(
    "toy", TOY_SECTION, TOY_DOOR, lambda: TOY_BOTS, probes, _describe, TOY_SETUP, TOY_PAGE
)
