"""A session with a history to read: acme's agent gets command tools that answer at once
(`check_disk`), at length (`read_log`), only once an operator approves (`deploy`), or when
the gate file exists (`wait_for_gate`); `turn` has alice ask and waits for the answer."""

from __future__ import annotations

from pathlib import Path

from adapters.server.app import App
from tests.adapters.telegram_harness import ALICE
from tests.admin.browser.walk import GATED, gated_tool
from tests.admin.harness import start_console
from tests.config_file import Table
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

OPERATOR = int(ALICE["telegram_user_id"])
DISK = "/dev/sda1  40G  12G  28G  30% /"
LOG_CHARS = 20_000  # what read_log prints: more than the page shows of a result


def _command(name: str, description: str, script: str, **extra: object) -> Table:
    return {"name": name, "description": description, "command": ["bash", "-c", script], **extra}


def tools(gate: Path) -> list[Table]:
    return [
        _command("check_disk", "How full a disk is", f"echo '{DISK}'"),
        _command("read_log", "The service's log", f"head -c {LOG_CHARS} /dev/zero | tr '\\0' x"),
        _command("deploy", "Deploy a release", "echo deployed", requires_approval=True),
        gated_tool(gate),
    ]


async def start(
    topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
    gate: Path,
) -> App:
    return await start_console(
        db_path,
        anthropic_api,
        telegram_api,
        slack_api,
        agent_tools=("check_disk", "read_log", "deploy", GATED),
        acme_extra={"tools": tools(gate)},
        topology=topology,
    )


async def turn(
    anthropic_api: FakeAnthropic, telegram_api: FakeTelegram, ask: str, *replies: Reply
) -> None:
    """Alice asks; the model answers with `replies` (tool calls), then says "Done: <ask>."."""
    answer = f"Done: {ask}."
    anthropic_api.script = [*replies, text(answer)]
    telegram_api.push_message(ask, user=OPERATOR)
    await until(lambda: answer in telegram_api.chat(OPERATOR), wait_s=30)
