"""Words that must not mislead, read where a person reads them: `switchboard run` in a real
terminal (tmux) with the offline model, and the console's pages over real HTTP from that same
process. A budget's notice names the command a terminal types (it has no buttons); /status
after a restart still says how full the context was; a wake-up's line prints once; a
schedule's header shows without its markdown; a tool a restart cut off reads "interrupted",
not "error"; the audit calls a child agent an agent, a delivered notification delivered, and
an admin's run of a schedule in words."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bridge import texts
from tests.adapters.cli_process import ROOT
from tests.adapters.terminal import Terminal
from tests.admin.harness import AdminClient

ADMIN_TOKEN = "a-long-enough-admin-token-for-tests"
PULSE = (
    '\n  [[workspaces.schedules]]\n  id = "pulse"\n  agent = "assistant"\n'
    '  cron = "0 3 1 1 *"\n  prompt = "Check the queue."\n'
)


def _terminal(tmp_path: Path, extra: str = "") -> Terminal:
    """The default config (the offline model), an admin token, and `extra` at the end of
    the workspace's part."""
    default = (ROOT / "config/switchboard.toml").read_text()
    config = tmp_path / "switchboard.toml"
    server = f'\n[server]\nport = 0\n\n[admin]\ntoken = "{ADMIN_TOKEN}"\n'
    config.write_text(default + extra + server)
    return Terminal(tmp_path, config)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    terminal = _terminal(tmp_path, PULSE)
    yield terminal
    terminal.close()


@pytest.fixture
def budgeted(tmp_path: Path) -> Iterator[Terminal]:
    terminal = _terminal(tmp_path, "\n  [[workspaces.budgets]]\n  limit_tokens = 2000\n")
    yield terminal
    terminal.close()


def _port(shown: str) -> int:
    port = re.search(r"http on 127\.0\.0\.1:(\d+)\.", shown)
    assert port, shown
    return int(port[1])


def test_a_budget_notice_in_a_terminal_names_the_command(budgeted: Terminal) -> None:
    budgeted.start()
    budgeted.wait_for_line("you>")
    budgeted.type("work 8")
    shown = budgeted.wait_for("switchboard> Paused before the next model call")
    notice = shown[shown.index("switchboard> Paused") :].split("\n")[0]
    assert "Typing /approve_spend lets this turn spend a little more" in notice, notice
    assert "Approve spend" not in shown, "a terminal has no such button"
    budgeted.type("/approve_spend")  # what it named works
    budgeted.wait_for("switchboard> Going on: you approved the spend for this turn.")


def test_a_wakeup_is_said_once(terminal: Terminal) -> None:
    terminal.start()
    terminal.wait_for_line("you>")
    terminal.type("remind 10s stretch")
    terminal.wait_for("agent> I will come back to “stretch” in 10s.")
    terminal.wait_for_line("you>")
    assert terminal.screen().count("I will come back") == 1
    terminal.wait_for("agent> Woken as you asked: stretch", limit_s=30)
    assert terminal.screen().count("I will come back") == 1


def test_status_after_a_restart_says_how_full_the_context_was(terminal: Terminal) -> None:
    terminal.start()
    terminal.wait_for_line("you>")
    terminal.type("work 2")
    terminal.wait_for("agent> Done: 2 step(s).")
    terminal.type("/status")
    shown = terminal.wait_for("Context: about ")
    [before] = re.findall(r"Context: about ([\d,]+) of 200,000 tokens", shown)
    terminal.keys("C-d")
    assert terminal.wait_exit() == 0
    terminal.start()
    terminal.wait_for_line("you>")
    terminal.type("/status")
    shown = terminal.wait_for("Context: about ", count=2)
    assert re.findall(r"Context: about ([\d,]+) of", shown) == [before, before]
    assert "not measured yet" not in shown


def test_a_schedule_shows_without_markdown(terminal: Terminal) -> None:
    terminal.start()
    terminal.wait_for_line("you>")
    terminal.type("/schedules run pulse")
    shown = terminal.wait_for("agent> From schedule pulse")
    assert "_From schedule" not in shown and "`pulse`" not in shown


async def _pages(port: int, *paths: str) -> list[str]:
    async with AdminClient(SimpleNamespace(port=port)) as client:  # type: ignore[arg-type]
        status, _ = await client.login(ADMIN_TOKEN)
        assert status == 200
        found = []
        for path in paths:
            status, html = await client.get(path)
            assert status == 200, path
            found.append(html)
        return found


async def _session_pages(port: int) -> dict[str, tuple[str, str]]:
    """Every session the workspace's page links to: its page and its audit."""
    [overview] = await _pages(port, "/admin/w/local/")
    ids = sorted(set(re.findall(r"/admin/w/local/sessions/(ses_[0-9a-f]+)", overview)))
    found: dict[str, Any] = {}
    for session_id in ids:
        path = f"/admin/w/local/sessions/{session_id}"
        page, audit = await _pages(port, path, path + "/audit")
        found[session_id] = (page, audit)
    return found


def test_a_tool_a_restart_cut_off_reads_interrupted_and_the_audit_in_words(
    terminal: Terminal,
) -> None:
    terminal.start()
    terminal.wait_for_line("you>")
    terminal.type("notify hello")
    terminal.wait_for("Last result: operator notified: hello")
    terminal.type("spawn check the disk")
    terminal.wait_for("agent> My child agent reported back:")
    terminal.type("sleep 30")
    terminal.wait_for("Step 1 of 1: sleep.")
    os.kill(terminal.pid(), signal.SIGKILL)  # the sleep is cut off
    assert terminal.wait_exit() == 128 + signal.SIGKILL
    terminal.start()
    shown = terminal.wait_for(f"    {texts.TURN_RESUMED}")
    shown = terminal.wait_for("Last result: Switchboard restarted while this tool ran")
    port = _port(shown[shown.rindex("http on") :])

    sessions = asyncio.run(_session_pages(port))
    [(page, audit)] = [p for p in sessions.values() if 'data-tool="sleep"' in p[0]]
    [sleep] = re.findall(r'<li class="call"[^>]* data-tool="sleep" data-outcome="([^"]+)"', page)
    assert sleep == "interrupted"
    assert "tool sleep was interrupted after" in audit and "tool sleep ran" not in audit
    assert "accepted_by_transport" not in audit
    assert re.search(r"agent notified the primary operator via [^,<]+, delivered", audit), audit
    assert "agent local/assistant" in audit and "operator local/" not in audit, "a child"
    assert "sent its report" in audit

    # An admin runs the schedule now: the overview and the run's own words say so plainly.
    async def run_pulse() -> str:
        async with AdminClient(SimpleNamespace(port=port)) as client:  # type: ignore[arg-type]
            await client.login(ADMIN_TOKEN)
            await client.get("/admin/w/local/schedules")
            status, _ = await client.post("/admin/w/local/schedules/pulse", {"action": "run"})
            assert status == 200
            return (await client.get("/admin/w/local/"))[1]

    overview = asyncio.run(run_pulse())
    [action] = re.findall(r'<li data-action="run_schedule">([^<]+)</li>', overview)
    assert "admin ran a schedule now: pulse (" in action and "run_schedule" not in action
    shown = terminal.wait_for("Run now, asked for by")
    assert "asked for by the admin." in shown and "admin admin" not in shown
