"""The console chat as a person meets it: `switchboard run` in a real terminal (tmux), a
task typed, a message typed while the agent works, the answer, and Ctrl-D. Log lines never
appear on the screen."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from tests.adapters.cli_process import ROOT, SCRIPT

TMUX = shutil.which("tmux")


def screen(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", session, "-S", "-200"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def wait_for_screen(session: str, text: str, limit_s: float = 30) -> str:
    deadline = time.monotonic() + limit_s
    while text not in (shown := screen(session)):
        assert time.monotonic() < deadline, f"{text!r} never appeared; the screen:\n{shown}"
        time.sleep(0.2)
    return shown


def test_a_conversation_in_a_real_terminal(tmp_path: Path) -> None:
    assert TMUX, "tmux is part of this project's machine image; install it: apt-get install tmux"
    config = tmp_path / "switchboard.toml"
    default = (ROOT / "config/switchboard.toml").read_text()
    config.write_text(default + "\n[server]\nport = 0\n")
    session = f"sb-test-{tmp_path.name}"
    command = f"'{SCRIPT}' run --config '{config}'; echo \"[exit $?]\"; sleep 60"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "150", "-y", "50", command],
        check=True,
        cwd=tmp_path,
    )
    try:
        wait_for_screen(session, "Type a message and press Enter")
        subprocess.run(["tmux", "send-keys", "-t", session, "work 3", "Enter"], check=True)
        wait_for_screen(session, "Step 1 of 3")
        subprocess.run(
            ["tmux", "send-keys", "-t", session, "also check the disk", "Enter"], check=True
        )
        wait_for_screen(session, "While I worked you said: “also check the disk”.")
        subprocess.run(["tmux", "send-keys", "-t", session, "C-d"], check=True)
        shown = wait_for_screen(session, "[exit 0]")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
    assert "Switchboard stopped" in shown
    assert " INFO " not in shown and "Traceback" not in shown, "logs went to the screen"
    assert (tmp_path / "var/switchboard.log").exists(), "logs went to the file beside the db"
