"""`switchboard ARGS` without paying its start-up each time: one process for the run's workers
imports the CLI and what `run` loads (the model SDKs, the platforms' libraries: about 3 s of
CPU, several times that on a loaded machine) once, then forks a child for each command. The
child is a process of its own, as the console script would be: its own pid, its arguments in
`sys.argv` (its name the script's), the environment and working directory the test gives it,
stdin, stdout and stderr the test's pipes, signals sent to its pid, its exit status the
command's (the server reaps it, so a signal's death reads as -signum, as a Popen's does). What
it cannot be is a fresh interpreter: what a module computed as it was imported (nothing of the
product reads the environment then) is the server's, and variables Python reads only as it
starts (`PYTHONPATH`, say: the fault-injecting `sitecustomize`) would be ignored, so a command
given any `PYTHON*` variable of its own starts the console script itself (`cli_process.py`)."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PRELOAD = (
    "adapters.server.cli",
    "adapters.server.run_cli",
    "adapters.server.app",
    "adapters.server.reloading",
    "adapters.server.check_cli",
    "adapters.server.status_cli",
    "adapters.server.providers",
    "runtime.providers.anthropic",
    "runtime.providers.openai_chat",
    "telegram.ext",
    "slack_bolt.async_app",
    "mcp",
)


def serve(path: str) -> None:
    """The server: import, then fork a child for each request on the socket, and write each
    child's exit status to its requester once it has ended. It ends when the worker that
    started it does (its stdin closes), even one that ended without running its atexit."""
    import gc
    import importlib

    for module in PRELOAD:
        importlib.import_module(module)
    gc.collect()
    gc.freeze()  # what the import built is shared with each child, not copied by its gc
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    woken, waker = socket.socketpair()
    waker.setblocking(False)
    signal.set_wakeup_fd(waker.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a child ended: `woken` becomes readable
    requesters: dict[int, socket.socket] = {}  # pid: where its exit status is written
    with selectors.DefaultSelector() as selector:
        selector.register(listener, selectors.EVENT_READ)
        selector.register(woken, selectors.EVENT_READ)
        selector.register(sys.stdin, selectors.EVENT_READ)  # the worker's end: closed as it ends
        while True:
            for key, _ in selector.select():
                if key.fileobj is sys.stdin:  # the worker has ended, however it ended: so do we
                    return
                if key.fileobj is woken:
                    woken.recv(4096)
                    _reap(requesters)
                    continue
                conn, _ = listener.accept()
                message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
                pid = os.fork()
                if pid == 0:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    selector.close()
                    for kept in (listener, woken, waker, *requesters.values()):
                        kept.close()
                    _child(json.loads(message), fds)  # never returns
                conn.sendall(f"{pid}\n".encode())
                requesters[pid] = conn
                for fd in fds:
                    os.close(fd)


def _reap(requesters: dict[int, socket.socket]) -> None:
    """Every child that has ended: its exit status to its requester."""
    while requesters:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        conn = requesters.pop(pid, None)
        if conn is not None:
            with contextlib.suppress(OSError):  # the requester has gone
                conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
            conn.close()


def _child(request: dict[str, Any], fds: list[int]) -> None:
    """Become `switchboard ARGS` and run it to its end."""
    import random

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    random.seed()
    os.chdir(str(request["cwd"]))
    sys.argv = [str(request["script"]), *request["args"]]
    code: object = 0
    try:
        if module := request.get("module"):  # `python -m MODULE ARGS`
            import runpy

            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            from adapters.server.cli import main

            code = main()
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:  # as a fresh interpreter ends on an uncaught Ctrl-C: by SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    status = code if isinstance(code, int) else (0 if code is None else 1)
    if not isinstance(code, int | None):
        print(code, file=sys.stderr)
    sys.exit(status)  # the interpreter's usual end: atexit, logging's flush


SHARED = "SWITCHBOARD_TEST_WARM_CLI"  # the main process's server's socket, for its workers
CONNECT_LIMIT_S = 120.0  # a shared server still importing on a loaded machine


class WarmCli:
    """The server this process forks its commands from. Under xdist the main process starts
    one for all its workers (`share_with_workers`): one import instead of one a worker. Else
    this process starts its own at first use; either ends with the process that started it."""

    _lock = threading.Lock()
    _started: WarmCli | None = None

    def __init__(self, path: str, proc: subprocess.Popen[bytes] | None) -> None:
        self.path = path
        self.proc = proc  # None: the main process's, shared

    @classmethod
    def launch(cls) -> WarmCli:
        """A server of this process's own, still importing: its socket appears once it is
        ready, and `spawn` waits for that."""
        folder = tempfile.mkdtemp(prefix="sb-cli-")
        path = os.path.join(folder, "fork.sock")
        proc = subprocess.Popen(
            [sys.executable, "-c", f"from tests.adapters.warm_cli import serve; serve({path!r})"],
            cwd=ROOT,
            stdin=subprocess.PIPE,  # never written: the server ends when it closes
            stdout=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": _pythonpath()},
        )
        server = cls(path, proc)
        atexit.register(server.stop)
        return server

    @classmethod
    def share_with_workers(cls) -> WarmCli:
        """In the main process, before the workers start (they inherit the environment)."""
        server = cls.launch()
        os.environ[SHARED] = server.path
        return server

    @classmethod
    def get(cls) -> WarmCli:
        with cls._lock:
            started = cls._started
            if started is None or (started.proc is not None and started.proc.poll() is not None):
                shared = os.environ.get(SHARED)
                cls._started = cls(shared, None) if shared else cls.launch()
            return cls._started

    def stop(self) -> None:
        assert self.proc is not None, "the shared server is the main process's to stop"
        self.proc.kill()
        self.proc.wait()
        with contextlib.suppress(OSError):  # a server stopped while importing made none
            os.unlink(self.path)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(self.path))

    def spawn(
        self,
        script: Path,
        args: list[str],
        env: Mapping[str, str],
        cwd: Path,
        fds: list[int],
        module: str | None = None,
    ) -> socket.socket:
        """Ask for a child running `script ARGS` (or `python -m module ARGS`, `script` the
        module's file) with these stdin, stdout and stderr: on the socket returned, its pid
        comes as a line, then its exit status as a line once it ends."""
        conn = self._connect()
        request = {"script": str(script), "args": args, "env": dict(env), "cwd": str(cwd)}
        if module is not None:
            request["module"] = module
        socket.send_fds(conn, [json.dumps(request).encode()], fds)
        return conn

    def _connect(self) -> socket.socket:
        """Connected to the server: one still importing has not made its socket yet."""
        deadline = time.monotonic() + CONNECT_LIMIT_S
        while True:
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                conn.connect(self.path)
                return conn
            except (FileNotFoundError, ConnectionRefusedError):
                conn.close()
                if self.proc is not None and self.proc.poll() is not None:
                    raise AssertionError("the warm CLI server ended") from None
                assert time.monotonic() < deadline, f"no warm CLI server at {self.path}"
                time.sleep(0.02)


class Child:
    """A forked command: its pid, and its exit status once it has ended."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn = conn
        self._lines = conn.makefile("rb")
        self.pid = int(self._lines.readline())

    def status(self) -> int:
        """Its exit status (blocking until it ends): -N when signal N ended it."""
        line = self._lines.readline()
        self._lines.close()
        self._conn.close()
        assert line, "the warm CLI server ended before the command did"
        return int(line)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)


def _pythonpath() -> str:
    """The project first, as the worker has it."""
    rest = os.environ.get("PYTHONPATH")
    return str(ROOT) + (os.pathsep + rest if rest else "")
