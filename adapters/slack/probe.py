"""Are these Slack tokens good, and for which workspace? `auth.test` for the bot token,
`apps.connections.open` for a Socket Mode app token (`check-config --probe`,
`switchboard init`). Slack's refusal raises CredentialRefused; a Slack that could not be
asked raises PlatformUnreachable (the token was not checked)."""

from __future__ import annotations

from functools import partial

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.platform import Probe
from adapters.slack.settings import SLACK_SECTION
from config.errors import CredentialRefused, PlatformUnreachable
from config.schema import WorkspaceConfig

SLACK_API = "https://slack.com/api/"


def probes(workspace: WorkspaceConfig) -> list[Probe]:
    """`check-config --probe`: the workspace's bot token (and its team), and its app token."""
    slack = SLACK_SECTION.of(workspace)
    if slack is None:
        return []
    token = slack.bot_token.get_secret_value()
    found: list[Probe] = [
        ("slack.bot_token", partial(whose_bot_token, token, slack.team_id, slack.api_base_url))
    ]
    if slack.app_token is not None:
        app = partial(check_app_token, slack.app_token.get_secret_value(), slack.api_base_url)
        found.append(("slack.app_token", app))
    return found


async def whose_bot_token(token: str, team_id: str | None, api_base_url: str = SLACK_API) -> str:
    """The team and bot user the token belongs to; refused when it belongs to another team
    than `team_id` (None: any team)."""
    answer = await _call(token, api_base_url, "auth.test")
    team = str(answer.get("team_id") or "")
    if team_id is not None and team != team_id:
        raise CredentialRefused(
            f"the token belongs to Slack team {answer.get('team')} ({team}), not team_id {team_id}"
        )
    return f"team {answer.get('team')} ({team}), bot user {answer.get('user_id')}"


async def team_of(token: str, api_base_url: str = SLACK_API) -> tuple[str, str]:
    """What the bot token belongs to, and its team's id (for the config's `team_id`)."""
    answer = await _call(token, api_base_url, "auth.test")
    team = str(answer.get("team_id") or "")
    return f"team {answer.get('team')} ({team}), bot user {answer.get('user_id')}", team


async def check_app_token(token: str, api_base_url: str = SLACK_API) -> str:
    await _call(token, api_base_url, "apps.connections.open")
    return "Socket Mode connections allowed"


async def _call(token: str, api_base_url: str, method: str) -> dict[str, object]:
    client = AsyncWebClient(token=token, base_url=api_base_url, retry_handlers=[], timeout=10)
    try:
        response = await client.api_call(method)
    except SlackApiError as exc:
        status = exc.response.status_code
        if status >= 500 or status == 429:  # busy or failing: Slack did not judge the token
            reason = f"{status} {exc.response.get('error') or 'server error'}"
            raise PlatformUnreachable("Slack", api_base_url, reason) from None
        raise CredentialRefused(f"Slack said {exc.response.get('error')}") from None
    except (aiohttp.ClientError, TimeoutError) as exc:  # the token was not checked
        raise PlatformUnreachable("Slack", api_base_url, str(exc) or "timed out") from None
    return dict(response.data) if isinstance(response.data, dict) else {}
