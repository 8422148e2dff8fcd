"""Slack as one platform (`adapters/platform.py`), registered in `adapters/platforms.py`.
Its bots and its probe are imported when they are used; the door process imports its door
alone (`adapters/doors/registry.py`)."""

from __future__ import annotations

from adapters.bots import PlatformKind
from adapters.platform import PageFacts, Platform, Probe
from adapters.slack.door import SLACK_DOOR
from adapters.slack.settings import SLACK_SECTION
from adapters.slack.setup import SLACK_SETUP
from config.schema import SwitchboardConfig, WorkspaceConfig


def _bots() -> PlatformKind:
    from adapters.slack.bots import SLACK_BOTS

    return SLACK_BOTS


def _probes(workspace: WorkspaceConfig) -> list[Probe]:
    from adapters.slack.probe import probes

    return probes(workspace)


def _describe(workspace: WorkspaceConfig, config: SwitchboardConfig) -> list[str]:
    """How its events come in, and its slash command."""
    slack = SLACK_SECTION.of(workspace)
    if slack is None:
        return []
    base = config.server.public_url or f"http://{config.server.host}:{config.server.port}"
    ways = ["Socket Mode"] if slack.app_token else []
    if slack.signing_secret:
        ways.append(f"HTTP at {base.rstrip('/')}/slack/events")
    return [
        f"  slack team {slack.team_id}: events by {' and '.join(ways)}",
        f"  slack slash command: {slack.slash_command}",
    ]


def _facts(workspace: WorkspaceConfig) -> list[tuple[str, str]]:
    slack = SLACK_SECTION.of(workspace)
    return [] if slack is None else [("Slack team", slack.team_id)]


_PAGE = PageFacts(
    facts=_facts,
    secrets=("bot_token",),
    allowed="Allowed Slack channels (ids, comma-separated)",
)

SLACK_PLATFORM = Platform(
    name=SLACK_SECTION.name,
    section=SLACK_SECTION,
    door=SLACK_DOOR,
    bots=_bots,
    probes=_probes,
    describe=_describe,
    setup=SLACK_SETUP,
    page=_PAGE,
)
