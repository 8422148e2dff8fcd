"""The console chat as a person meets it: `switchboard run` in a real terminal (tmux), with
the offline model. What they paste arrives whole and as one message; what is printed while
they type leaves their line alone; Up recalls; Ctrl-C stops the turn, clears a half-typed
line, and quits when pressed twice on an empty one; Ctrl-D quits at once, a turn under way
resuming on the next start; the demo works in any order, across /new and a restart, and a
turn a kill cut off goes on, saying so. Log lines never appear on the screen."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.console.adapter import HOW_TO_QUIT, QUITTING
from adapters.server.run_cli import ADMIN_OFF
from bridge import texts
from tests.adapters.cli_process import ROOT
from tests.adapters.terminal import Terminal

ADMIN_TOKEN = "a-long-enough-admin-token-for-tests"


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    config = tmp_path / "switchboard.toml"
    default = (ROOT / "config/switchboard.toml").read_text()
    config.write_text(default + f'\n[server]\nport = 0\n\n[admin]\ntoken = "{ADMIN_TOKEN}"\n')
    terminal = Terminal(tmp_path, config)
    yield terminal
    terminal.close()


def test_typing_pasting_and_stopping_in_a_real_terminal(terminal: Terminal) -> None:
    terminal.start()
    shown = terminal.wait_for_line("you>")  # the line editor's prompt: it reads keys now
    port = re.search(r"http on 127\.0\.0\.1:(\d+)\.", shown)
    assert port, shown
    assert f"Admin console: http://127.0.0.1:{port[1]}/admin" in shown
    assert ADMIN_OFF not in shown

    terminal.paste("first line\nsecond line\nthird line")
    terminal.keys("Enter")
    shown = terminal.wait_for("agent> You said: first line")
    assert "agent> You said: first line\n       second line\n       third line\n" in shown, shown
    assert shown.count("You said:") == 1 and "Noted your message" not in shown, f"one:\n{shown}"

    # 10,199 characters: a terminal's own line editing holds 4,095; this editor has no limit
    long = " ".join(f"w{i:04d}" for i in range(1700))
    terminal.paste(long)
    terminal.keys("Enter")
    shown = terminal.wait_for(f"agent> You said: {long}\n")
    assert "was cut" not in shown and "left out" not in shown, shown

    terminal.type("work 2")
    terminal.wait_for("Step 1 of 2: sleep.")
    terminal.type("also check the disk")  # a message while the agent works
    terminal.type("still typ", enter=False)  # and half a line when the answer comes
    terminal.wait_for("While I worked you said: “also check the disk”.")
    shown = terminal.wait_for_line("you> still typ")  # whole, below what was printed
    assert shown.count("still typ") == 1, f"the line being typed was split:\n{shown}"
    lines = re.findall(r"Step (\d) of 2|\(your message reached the agent", shown)
    assert [n for n in lines if n] == ["1", "2"], f"each step once, in order:\n{shown}"
    assert lines.count("") == 1, f"and the note on the message typed meanwhile:\n{shown}"
    terminal.type("ing")
    terminal.wait_for("agent> You said: still typing")

    terminal.keys("Up", "Up", "Up")  # still typing, also check the disk, work 2
    terminal.wait_for("you> work 2", count=2)
    terminal.keys("BSpace")
    terminal.type("5")
    terminal.wait_for("Step 1 of 5: sleep.")
    terminal.keys("C-c")  # stops the turn, not Switchboard
    terminal.wait_for(f"switchboard> {texts.STOPPED}")
    terminal.type("are you there?")
    shown = terminal.wait_for("agent> You said: are you there?")
    assert "Done: 5 step(s)" not in shown, shown

    terminal.type("half a thought", enter=False)
    terminal.keys("C-c")  # nothing runs: the line is cleared, as in a shell
    terminal.wait_for_line("you>")
    terminal.keys("C-c")  # on an empty line: it says how to quit, and does not yet
    terminal.wait_for(HOW_TO_QUIT)
    terminal.type("still here")
    shown = terminal.wait_for("agent> You said: still here\n")
    assert "half a thought" not in shown and terminal.exit_status() is None, shown

    terminal.type("work 20")
    terminal.wait_for("Step 1 of 20: sleep.")
    terminal.keys("C-d")  # quits now, saying so, without waiting out the turn's 20 s
    terminal.wait_for(QUITTING)
    assert terminal.wait_exit() == 0  # not the turn's 20 s: "Done: 20 step(s)" never shows
    terminal.start()  # the turn goes on
    terminal.wait_for(f"    {texts.TURN_RESUMED}")  # under its status, at once
    terminal.wait_for_line("you>")
    terminal.keys("C-c")
    terminal.wait_for(f"switchboard> {texts.STOPPED}", count=2)
    terminal.keys("C-d")  # nothing runs: it quits without a word about resuming
    assert terminal.wait_exit() == 0
    shown = terminal.screen()
    assert shown.count(QUITTING) == 1 and "Done: 20 step(s)" not in shown
    assert shown.count("Switchboard stopped") == 2
    assert " INFO " not in shown and "Traceback" not in shown, "logs went to the screen"
    assert (terminal.folder / "var/switchboard.log").exists(), "logs went to the file beside the db"


def demo(terminal: Terminal, times: int) -> None:
    """The banner's suggestions, after a fresh session: each answered (the `times`th time)."""
    terminal.type("work 1")
    terminal.wait_for("agent> Done: 1 step(s). Last result: slept 1s", count=2 * times - 1)
    terminal.type("/new")
    terminal.wait_for(f"switchboard> {texts.NEW_SESSION}", count=times)
    terminal.type("work 1")
    terminal.wait_for("agent> Done: 1 step(s). Last result: slept 1s", count=2 * times)
    terminal.type("notify hello")
    terminal.wait_for("notice> 🔔 assistant:", count=times)
    terminal.wait_for(texts.TYPE_TO_ANSWER, count=times)  # a terminal has no reply to a message
    terminal.wait_for("Last result: operator notified: hello", count=times)
    terminal.type("spawn check the disk")
    terminal.wait_for("agent> My child agent reported back:", count=times)


def test_the_demo_across_new_sessions_a_kill_and_a_restart(
    terminal: Terminal, tmp_path: Path
) -> None:
    config = tmp_path / "switchboard.toml"
    config.write_text(config.read_text().split("[admin]")[0])  # no admin: the console is off
    terminal.start()
    assert ADMIN_OFF in terminal.wait_for_line("you>"), "the banner says how to turn it on"
    demo(terminal, times=1)

    terminal.type("work 3")
    terminal.wait_for("Step 2 of 3: sleep.")
    os.kill(terminal.pid(), signal.SIGKILL)  # mid-turn, no goodbye
    assert terminal.wait_exit() == 128 + signal.SIGKILL

    terminal.start()  # the same data folder
    shown = terminal.wait_for("Done: 3 step(s)")
    resumed = shown.index(f"    {texts.TURN_RESUMED}")
    assert resumed < shown.index("agent> (Switchboard restarted"), "told at once, and again"
    assert shown.count("Done: 3 step(s)") == 1
    terminal.wait_for_line("you>")
    demo(terminal, times=2)

    terminal.keys("C-c")  # nothing runs: a second Ctrl-C quits
    terminal.wait_for(HOW_TO_QUIT)
    assert terminal.exit_status() is None
    terminal.keys("C-c")
    assert terminal.wait_exit() == 0
    shown = terminal.screen()
    assert "could not finish" not in shown and "Traceback" not in shown
