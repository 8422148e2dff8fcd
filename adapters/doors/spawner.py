"""Door processes forked from the starter (`zygote.py`): one starter for this process, started
by the first door process asked for and again should it have gone; each door process forked
from it in milliseconds, where a fresh interpreter spends about 0.35 s of CPU importing.

The starter is started from the calling thread, whose priority it and every door process it
forks keep (`keeper.py` calls from a thread made before the main process lowers its own)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading

START_S = 120.0  # the starter's imports, on a machine busy with other work
FORK_S = 30.0  # a fork asked for, until its pid is told


class Forked:
    """A door process forked by the starter: what `keeper.py` reads of a `subprocess.Popen`."""

    def __init__(self, pid: int, status: socket.socket, said: bytes = b"") -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._status = status
        self._status.setblocking(False)
        self._said = said  # its exit status, or the start of it, if already told

    def poll(self) -> int | None:
        """Its exit status once it has exited, else None; never waits."""
        if self.returncode is not None:
            return self.returncode
        if b"\n" not in self._said:
            try:
                data = self._status.recv(64)
            except BlockingIOError:
                return None
            if data:
                self._said += data
                return self.poll()
        if b"\n" in self._said:
            self.returncode = int(self._said.split(b"\n", 1)[0])
            self._status.close()
            return self.returncode
        # The starter went before this process did: it can only be looked for, its status
        # is not known.
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            self.returncode = -1
            self._status.close()
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            os.kill(self.pid, signal.SIGKILL)


class _Starter:
    def __init__(self) -> None:
        self.owner = os.getpid()
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            argv = [sys.executable, "-m", "adapters.doors.zygote", "--fd", str(theirs.fileno())]
            self.process = subprocess.Popen(
                argv, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL
            )
        self.control.settimeout(START_S)
        try:
            ready = self.control.recv(16)
        except OSError:
            ready = b""
        if ready != b"ready":
            self.close()
            raise OSError(f"the door processes' starter exited with status {self.process.poll()}")
        self.control.settimeout(None)

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.process.poll() is None

    def close(self) -> None:
        self.control.close()
        self.process.kill()
        self.process.wait()


_starter: _Starter | None = None
_lock = threading.Lock()


def spawn(argv: list[str], door_fd: int) -> Forked:
    """A door process running `python -m adapters.doors --fd N ARGV`, N its number of
    `door_fd`, in this process's working directory and environment."""
    global _starter
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    with _lock:
        for _ in range(2):  # a starter that has just gone is started again, once
            if _starter is None or not _starter.alive():
                if _starter is not None and _starter.owner == os.getpid():
                    _starter.close()
                _starter = _Starter()
            if (forked := _fork(_starter, request, door_fd)) is not None:
                return forked
            _starter.close()
            _starter = None
    raise OSError("the door processes' starter did not fork a door process")


def _fork(starter: _Starter, request: bytes, door_fd: int) -> Forked | None:
    ours, theirs = socket.socketpair()
    said = b""
    try:
        with theirs:
            socket.send_fds(starter.control, [request], [door_fd, theirs.fileno()])
        ours.settimeout(FORK_S)
        while b"\n" not in said and (data := ours.recv(64)):
            said += data
    except OSError:
        pass
    if b"\n" not in said:
        ours.close()
        return None
    pid, rest = said.split(b"\n", 1)
    return Forked(int(pid), ours, rest)
