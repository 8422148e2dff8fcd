"""The door process's starter (`python -m adapters.doors.zygote`): a process that imports the
door process's code once, then forks a door process from itself each time it is asked.

Importing that code (aiohttp, the platforms' doors, the inbox) costs about 0.35 s of CPU, most
of it aiohttp's (none of the main process's code: `tests/adapters/doors/test_door_imports.py`).
A door process started again after a crash would pay it again, at the moment acknowledgements
wait for it; forked from here it is serving in milliseconds. `spawner.py` is the other side.

Over a datagram socket pair with the process that started it, each request is one message:
a JSON object (`argv`, `cwd`, `env`) with two descriptors, the door process's end of its
control pair (its `--fd`) and a status socket. On the status socket this process writes the
child's pid, one line, then its exit status, one line, once it has exited. When the requester
goes (its end closes), this process exits; the door processes it forked go on, each until its
own control pair closes."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import selectors
import signal
import socket
import sys
import traceback

from adapters.doors import process  # what every door process runs: imported once, here

MAX_REQUEST_BYTES = 1 << 20


def serve(control: socket.socket) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the main process, which stops us
    woken, waker = socket.socketpair()
    waker.setblocking(False)
    signal.set_wakeup_fd(waker.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a child ended: `woken` becomes readable
    statuses: dict[int, socket.socket] = {}  # pid: where its exit status is written
    gc.collect()
    gc.freeze()  # what the imports built is shared with each child, not copied by its gc
    control.sendall(b"ready")
    with selectors.DefaultSelector() as selector:
        selector.register(control, selectors.EVENT_READ)
        selector.register(woken, selectors.EVENT_READ)
        while True:
            for key, _ in selector.select():
                if key.fileobj is woken:
                    woken.recv(4096)
                    _reap(statuses)
                    continue
                message, fds, _, _ = socket.recv_fds(control, MAX_REQUEST_BYTES, 2)
                if not message:  # the requester has gone
                    return
                door_fd, status_fd = fds
                status = socket.socket(fileno=status_fd)
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    for fd in (control, woken, waker, status, *statuses.values()):
                        fd.close()
                    _child(json.loads(message), door_fd)  # never returns
                os.close(door_fd)
                status.sendall(f"{pid}\n".encode())
                statuses[pid] = status
            _reap(statuses)  # a child that ended before it was listed


def _reap(statuses: dict[int, socket.socket]) -> None:
    while True:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if (status := statuses.pop(pid, None)) is not None:
            with contextlib.suppress(OSError):  # the requester may have gone: no one to tell
                status.sendall(f"{os.waitstatus_to_exitcode(wait_status)}\n".encode())
            status.close()


def _child(request: dict[str, object], door_fd: int) -> None:
    """Become a door process: the requester's working directory and environment, its
    arguments with this process's number of the control pair's end, its exit status."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    code = 1
    try:
        os.chdir(str(request["cwd"]))
        os.environ.clear()
        os.environ.update(dict(request["env"]))  # type: ignore[call-overload]
        argv = [str(arg) for arg in request["argv"]]  # type: ignore[attr-defined]
        code = process.main(["--fd", str(door_fd), *argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m adapters.doors.zygote")
    parser.add_argument("--fd", type=int, required=True, help="this process's end of the pair")
    args = parser.parse_args()
    serve(socket.socket(fileno=args.fd))


if __name__ == "__main__":
    main()
