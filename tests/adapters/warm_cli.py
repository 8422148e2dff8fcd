"""`switchboard ARGS` run to its end without paying its start-up each time: one process per
test worker imports the CLI once (about 0.8 s of CPU, several seconds on a loaded machine),
then forks a child for each command. The child is a process of its own, as the console script
would be: its own pid, its arguments in `sys.argv` (its name the script's), the environment and
working directory the test gives it, stdin, stdout and stderr the test's pipes, its exit status
the command's. What it cannot be is a fresh interpreter: what a module computed as it was
imported (nothing of the product reads the environment then) is the server's. A test that sends
a signal, or runs a process in the background, starts the console script itself
(`cli_process.start`)."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRELOAD = ("adapters.server.cli",)
READY = b"ready\n"


def serve(path: str) -> None:
    """The server: import the CLI, then fork a child for each request on the socket."""
    import gc
    import importlib

    for module in PRELOAD:
        importlib.import_module(module)
    gc.collect()
    gc.freeze()  # what the import built is shared with each child, not copied by its gc
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they end
    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    while True:
        conn, _ = listener.accept()
        message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        if os.fork() == 0:
            listener.close()
            _child(conn, json.loads(message), fds)  # never returns
        conn.close()
        for fd in fds:
            os.close(fd)


def _child(conn: socket.socket, request: dict[str, object], fds: list[int]) -> None:
    """Become `switchboard ARGS`: tell the client the pid, run the command, tell its status."""
    import random
    import time

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])  # type: ignore[arg-type]
    time.tzset()
    random.seed()
    os.chdir(str(request["cwd"]))
    sys.argv = [str(request["script"]), *request["args"]]  # type: ignore[misc]
    conn.sendall(f"{os.getpid()}\n".encode())
    code: object = 0
    try:
        from adapters.server.cli import main

        code = main()
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    status = code if isinstance(code, int) else (0 if code is None else 1)
    if not isinstance(code, int | None):
        print(code, file=sys.stderr)
    with contextlib.suppress(OSError):
        sys.stdout.flush()
        sys.stderr.flush()
    conn.sendall(f"{status}\n".encode())
    conn.close()
    sys.exit(status)  # the interpreter's usual end: atexit, logging's flush


class WarmCli:
    """This worker's server, started at first use and stopped when the worker ends."""

    _lock = threading.Lock()
    _started: WarmCli | None = None

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="sb-cli-")
        self.path = os.path.join(self.folder, "fork.sock")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"from tests.adapters.warm_cli import serve; serve({self.path!r})",
            ],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": _pythonpath()},
        )
        assert self.proc.stdout is not None
        ready = self.proc.stdout.readline()
        assert ready == READY, f"the warm CLI server did not start: {ready!r}"
        atexit.register(self.stop)

    @classmethod
    def get(cls) -> WarmCli:
        with cls._lock:
            if cls._started is None or cls._started.proc.poll() is not None:
                cls._started = WarmCli()
            return cls._started

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
            os.rmdir(self.folder)

    def spawn(
        self, script: Path, args: list[str], env: Mapping[str, str], cwd: Path, fds: list[int]
    ) -> Child:
        """A child running `script ARGS` with these stdin, stdout and stderr."""
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(self.path)
        request = {"script": str(script), "args": args, "env": dict(env), "cwd": str(cwd)}
        socket.send_fds(conn, [json.dumps(request).encode()], fds)
        return Child(conn)


class Child:
    """A forked command: its pid, and its exit status once it has ended."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn = conn
        self._lines = conn.makefile("rb")
        self.pid = int(self._lines.readline())

    def status(self) -> int:
        """Its exit status (blocking until it ends); -9 when it was killed."""
        line = self._lines.readline()
        self._lines.close()
        self._conn.close()
        return int(line) if line else -signal.SIGKILL

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)


def _pythonpath() -> str:
    """The project first, as the worker has it."""
    rest = os.environ.get("PYTHONPATH")
    return str(ROOT) + (os.pathsep + rest if rest else "")
