"""`switchboard run` in a real terminal: a tmux pane (a pseudo-terminal and a terminal that
draws it, as a person's would), on a tmux server of its own. Keys are typed, text is pasted
as a terminal pastes it (bracketed, when the program asked for that), and the screen is read
as it shows, wrapped lines joined."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from shlex import quote

from tests.adapters.cli_process import SCRIPT

TMUX = shutil.which("tmux")
SETTINGS = "set -g history-limit 20000\nset -g remain-on-exit on\n"  # a dead pane stays readable


class Terminal:
    def __init__(self, folder: Path, config: Path, *, width: int = 150, height: int = 50) -> None:
        assert TMUX, (
            "tmux is part of this project's machine image; install it: apt-get install tmux"
        )
        self.folder = folder
        self.socket = f"sb-test-{uuid.uuid4().hex[:10]}"
        self.settings = folder / "tmux.conf"
        self.settings.write_text(SETTINGS)
        self.pid_file = folder / "switchboard.pid"
        pid_file, script, config_file = (quote(str(p)) for p in (self.pid_file, SCRIPT, config))
        run = f"echo $$ > {pid_file}; exec {script} run --config {config_file}"
        # Its shell reaps it and says how it ended (tmux does not always tell a pane's end).
        self.command = f'sh -c {quote(run)}; echo "[exit $?]"'
        self.runs = 0
        self.size = (str(width), str(height))
        self.earlier = ""  # the screen of the runs before this one

    def tmux(self, *args: str, stdin: str | None = None) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", str(self.settings), *args],
            input=stdin,
            capture_output=True,
            text=True,
            check=True,
            cwd=self.folder,
        ).stdout

    def start(self) -> None:
        """Run `switchboard run` in the pane; again (on the same data folder) once it ended."""
        self.runs += 1
        if self.runs > 1:  # a new start clears the pane: what it showed is kept here
            self.earlier = self.screen()
            self.tmux("clear-history", "-t", "sb")
            self.tmux("respawn-pane", "-k", "-t", "sb", self.command)
            return
        width, height = self.size
        self.tmux("new-session", "-d", "-s", "sb", "-x", width, "-y", height, self.command)

    def pid(self) -> int:
        """The process of `switchboard run` (its shell wrote its pid, then became it)."""
        return int(self.pid_file.read_text())

    def exit_status(self) -> int | None:
        """None while this run goes on; then its exit status (128 + a signal that killed it)."""
        ended = re.findall(r"\[exit (\d+)\]", self.screen())
        return int(ended[-1]) if len(ended) == self.runs else None

    def type(self, text: str, *, enter: bool = True) -> None:
        self.tmux("send-keys", "-t", "sb", "-l", text)
        if enter:
            self.keys("Enter")

    def keys(self, *names: str) -> None:
        """Keys by tmux's names: Enter, Up, C-c, C-d, BSpace."""
        self.tmux("send-keys", "-t", "sb", *names)

    def paste(self, text: str) -> None:
        """As a terminal pastes: lines end in a carriage return, the whole wrapped in the
        bracketed-paste markers when the program turned that mode on."""
        self.tmux("load-buffer", "-b", "pasted", "-", stdin=text)
        self.tmux("paste-buffer", "-p", "-d", "-b", "pasted", "-t", "sb")

    def screen(self) -> str:
        """Everything shown since the first start (the history too), wrapped lines joined."""
        shown = self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "sb")
        return self.earlier + shown

    def wait_for(self, text: str, *, count: int = 1, limit_s: float = 30) -> str:
        """Until `text` shows `count` times; the screen then."""
        return self._until(lambda shown: shown.count(text) >= count, f"{text!r} {count}x", limit_s)

    def wait_for_line(self, line: str, limit_s: float = 30) -> str:
        """Until the bottom line with text on it (where the operator types) is `line`."""
        return self._until(lambda shown: _last_line(shown) == line, f"{line!r} last", limit_s)

    def _until(self, shows: Callable[[str], bool], what: str, limit_s: float) -> str:
        deadline = time.monotonic() + limit_s
        while not shows(shown := self.screen()):
            assert time.monotonic() < deadline, (
                f"{what} never showed; the screen:\n{shown}\nthe log's end:\n{self.log_end()}"
            )
            time.sleep(0.1)
        return shown

    def log_end(self, lines: int = 40) -> str:
        """The last lines of the app's log (in the data folder), for a failure's message."""
        log = self.folder / "var/switchboard.log"
        if not log.exists():
            return "(no log yet)"
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])

    def wait_exit(self, limit_s: float = 30) -> int:
        self.wait_for("[exit ", count=self.runs, limit_s=limit_s)
        status = self.exit_status()
        assert status is not None
        return status

    def close(self) -> None:
        """Stop what runs in it, then its tmux server, and remove the server's socket. The
        process is killed first: the SIGHUP of a closing pane is `switchboard run`'s reload."""
        with contextlib.suppress(OSError, ValueError, subprocess.CalledProcessError):
            if self.runs and self.exit_status() is None:
                os.kill(self.pid(), signal.SIGKILL)
        where = subprocess.run(
            ["tmux", "-L", self.socket, "display-message", "-p", "#{socket_path}"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False, capture_output=True)
        if where:
            Path(where).unlink(missing_ok=True)


def _last_line(screen: str) -> str:
    lines = screen.rstrip().splitlines()
    return lines[-1] if lines else ""
