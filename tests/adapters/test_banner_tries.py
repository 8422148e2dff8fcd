"""The banner of `switchboard run` in a real terminal (tmux) suggests only what the terminal's
agent can do (issue 43): an agent without `spawn_agent` and `schedule_wakeup` is not offered
`spawn` and `remind`; one with every tool is offered all four."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.cli_process import ROOT
from tests.adapters.terminal import Terminal

ALL_TOOLS = 'tools = ["notify_operator", "sleep", "spawn_agent", "schedule_wakeup", "disk_usage"]'


def banner(folder: Path, tools: str) -> str:
    """The banner's first lines, up to its keys, with the agent given `tools`."""
    config = folder / "switchboard.toml"
    default = (ROOT / "config/switchboard.toml").read_text()
    assert ALL_TOOLS in default
    config.write_text(default.replace(ALL_TOOLS, tools) + "\n[server]\nport = 0\n")
    terminal = Terminal(folder, config)
    try:
        terminal.start()
        shown = terminal.wait_for_line("you>")
        return shown[: shown.index("Ctrl-C stops")]
    finally:
        terminal.close()


def test_the_banner_offers_only_what_the_agent_can_do(tmp_path: Path) -> None:
    shown = banner(tmp_path, 'tools = ["notify_operator", "sleep"]')
    assert "Try: work 5 (then type while it works), notify hello, /help." in shown, shown
    assert "spawn" not in shown and "remind" not in shown, shown


def test_the_banner_offers_all_four_to_an_agent_with_every_tool(tmp_path: Path) -> None:
    shown = banner(tmp_path, ALL_TOOLS)
    assert (
        "Try: work 5 (then type while it works), notify hello, spawn check the disk, "
        "remind 10s stretch, /help." in shown
    ), shown
