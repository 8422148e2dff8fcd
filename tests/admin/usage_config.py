"""The Usage page's tests' App: acme (Telegram, alice, an agent with the `sleep` tool) with
budgets and a priced model, globex (Slack) with neither."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.adapters.slack_harness import globex_workspace
from tests.adapters.telegram_harness import ALICE
from tests.admin.harness import ACME_ADMIN, GLOBAL_TOKEN, GLOBEX_ADMIN
from tests.config_file import Table, anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology

PRICE = {"input": 3.0, "output": 15.0}  # dollars per million; a cache write 1.25x, a read 0.1x
# A day's 1,000 tokens: a turn of a few rounds reaches it.
DAILY_TOKENS = {"scope": "workspace", "period": "day", "limit_tokens": 1000, "warn_at": 0.5}


def usage_config(
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
    budgets: Sequence[Table],
) -> Path:
    bot = {"bot_token": telegram_api.token, "api_base_url": telegram_api.base_url}
    acme = workspace("acme", [ALICE], telegram=bot, agent_tools=("sleep",))
    return write_config(
        topology.folder / "switchboard.toml",
        db=topology.db,
        provider={**anthropic(anthropic_api.url), "prices": {"claude-test-model": PRICE}},
        admin={"token": GLOBAL_TOKEN},
        workspaces=[
            {**acme, "admins": [ACME_ADMIN], "budgets": list(budgets)},
            {**globex_workspace(slack_api), "admins": [GLOBEX_ADMIN]},
        ],
    )
