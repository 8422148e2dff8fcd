"""A stop while a turn runs a tool (a deploy, a restart of the replica) on every topology: the
tool runs to its end during the stop's grace, and the next start (or the standby taking over)
goes on from its result: one answer, the tool run once, nothing answered as interrupted."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bridge import texts
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import blocking_tool, until
from tests.runtime.test_hand_back import written
from tests.topology import Topology

ALICE = 1001


async def test_a_tool_under_way_at_a_stop_finishes_and_the_turn_goes_on_after_it(
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    tmp_path: Path,
) -> None:
    gate, marker = tmp_path / "gate", tmp_path / "marker"
    tool = blocking_tool("deploy", gate, marker)
    anthropic_api.script = [tools(("deploy", {})), text("Deployed, and it went fine.")]
    await start_app(
        tmp_path / "unused.db",
        anthropic_api,
        telegram_api,
        agent_tools=("deploy",),
        tools=[tool],
        topology=topology,
    )
    telegram_api.push_message("deploy the release", user=ALICE)
    await until(lambda: written(marker), wait_s=30)
    runner = topology.running()
    assert runner is not None
    topology.apps.remove(runner)
    stopping = asyncio.ensure_future(runner.stop())
    await asyncio.sleep(0.5)
    assert not stopping.done(), "the stop waits for the tool"
    gate.touch()
    await asyncio.wait_for(stopping, 30)
    if topology.kind == "replicas":  # the other replica takes the session, and sends
        [other] = topology.apps
        await until(lambda: other.active, wait_s=15)
    else:
        await topology.start(topology.folder / "switchboard.toml")
    # The answer, once: saying it went on after the restart when the stop handed the turn
    # back (the usual way), plain when the turn ended before the stop took it.
    plain = "Deployed, and it went fine."
    answers = (plain, texts.RESUMED_ANSWER.format(answer=plain))

    def answered() -> list[str]:
        return [m for m in telegram_api.chat(ALICE) if m in answers]

    await until(lambda: bool(answered()), wait_s=30)
    assert len(marker.read_text().splitlines()) == 1, "the tool ran once"
    [result] = anthropic_api.requests[-1]["messages"][2]["content"]
    assert '"status": "success"' in result["content"] and "released" in result["content"]
    assert not result.get("is_error"), "the model got the tool's own result"
    for app in topology.apps:  # every turn finished and every reply sent: a second is in
        await asyncio.wait_for(app.bridge.settle(), 30)
    assert len(answered()) == 1, telegram_api.chat(ALICE)
