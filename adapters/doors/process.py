"""The door process (`python -m adapters.doors`), started by `switchboard run`
(`adapters/doors/keeper.py`) with one end of a socket pair.

It listens on `[server] host:port`. A request to a platform door is checked, stored in the
intake's inbox file (`doors.py`, `adapters/intake/inbox.py`: commits shared by every request in
flight) and answered: the
acknowledgement waits on nothing but that commit. Any other path (health, metrics, the admin
console) goes through to the main process's HTTP server on a Unix socket. The bots in polling
mode are polled here too (`doors.py` runs what each platform's door polls, e.g.
`adapters/telegram/polling.py`), into the same inbox.

Over the socket pair, one JSON object per line. From the main process: `keys` (the workspaces'
signing secrets, webhook secret tokens and polling bots, at start and after each reload),
`handled` (the ids of stored requests it handed on: removed here, this process being the
inbox's one writer) and `failed` (an id and why it failed: its attempts counted). To
it: `listening` (the port) or `cannot_listen` (why not), `stored` after each commit, so that
it takes the new requests at once, `polling_failed` (a poll failed: the platform, the workspace,
the error), and `log` records, which it logs as its own (its handlers, its redaction). When
the main process goes (its end of the socket closes), this one finishes the requests under
way and exits."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import socket
import sys
from functools import partial
from pathlib import Path
from typing import Any

from aiohttp import web

from adapters.doors import slow_clients, wire
from adapters.doors.doors import Doors
from adapters.doors.proxy import Proxy
from adapters.intake.door import MAX_REQUEST_BYTES, door_metrics
from adapters.intake.inbox import InboxWriter

log = logging.getLogger(__name__)


class Control:
    """This process's end of the socket pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self._writer = writer

    def send(self, **message: Any) -> None:
        wire.send(self._writer, **message)

    async def receive(self) -> dict[str, Any] | None:
        return await wire.receive(self.reader)


class ToMain(logging.Handler):
    """Log records go to the main process, which logs them with its own handlers."""

    def __init__(self, control: Control, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._control = control
        self._loop = loop

    def emit(self, record: logging.LogRecord) -> None:
        fields = {k: str(v) for k, v in record.__dict__.items() if k not in wire.RECORD_ATTRIBUTES}
        if record.exc_info:
            fields["traceback"] = logging.Formatter().formatException(record.exc_info)
        entry = {"level": record.levelno, "name": record.name, "msg": record.getMessage()}
        if self._loop.is_closed():  # said as the interpreter ends: there is no one to tell
            return
        self._loop.call_soon_threadsafe(lambda: self._control.send(log={**entry, **fields}))


async def serve(args: argparse.Namespace) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the main process, which stops us
    loop = asyncio.get_running_loop()
    reader, writer = await asyncio.open_unix_connection(sock=socket.socket(fileno=args.fd))
    control = Control(reader, writer)
    root = logging.getLogger()
    root.handlers[:] = [ToMain(control, loop)]
    root.setLevel(args.log_level)
    first = await control.receive()
    if first is None:
        return 0
    inbox = InboxWriter(args.inbox, lambda n: control.send(stored=n))
    doors = Doors(first["keys"], inbox.put, lambda *failure: control.send(polling_failed=failure))
    doors.poll()
    proxy = Proxy(args.upstream)
    app = web.Application(client_max_size=MAX_REQUEST_BYTES)
    doors.route(app)
    app.router.add_get("/metrics", partial(proxy.metrics, door_metrics(app)))
    app.router.add_route("*", "/{tail:.*}", proxy.handle)
    app.on_shutdown.append(proxy.end_streams)
    runner = slow_clients.runner(
        app, args.headers_timeout, args.body_timeout, access_log=None, handle_signals=False
    )
    await runner.setup()
    try:  # whatever happens, everything made above is closed before the loop is
        try:
            await web.TCPSite(runner, args.host, args.port, reuse_address=True).start()
        except OSError as exc:
            control.send(cannot_listen=exc.strerror or str(exc))
            await writer.drain()
            return 1
        port = int(runner.addresses[0][1]) if runner.addresses else args.port
        # What is built by now (modules, the doors, the server) lives as long as the process:
        # frozen, a full garbage collection does not walk it (about 85,000 objects, a pause
        # of tens of milliseconds, longer on a busy machine, that every request under way
        # would wait out before its ack), as `switchboard run` does in the main process.
        gc.freeze()
        control.send(listening=port)
        while (message := await control.receive()) is not None:
            if "keys" in message:
                doors.update(message["keys"])
            elif "handled" in message:
                inbox.forget(message["handled"]).add_done_callback(_written)
            elif "replay_failed" in message:
                request_id, error = message["replay_failed"]
                inbox.count_failure(int(request_id), str(error)).add_done_callback(_written)
    finally:
        await doors.close()
        await runner.cleanup()  # the requests under way finish: stored and answered
        await proxy.close()
        inbox.close()
    return 0


def _written(done: asyncio.Future[None]) -> None:
    """What the main process asked written failed: logged (the request stays, and is handed
    on again at the next start, where the bridge's dedupe drops it)."""
    if not done.cancelled() and (error := done.exception()) is not None:
        log.error("inbox not updated", exc_info=error)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m adapters.doors")
    parser.add_argument("--fd", type=int, required=True, help="this process's end of the pair")
    parser.add_argument("--inbox", type=Path, required=True)
    parser.add_argument("--upstream", type=Path, required=True, help="the main process's socket")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument("--headers-timeout", type=float, default=slow_clients.HEADERS_S)
    parser.add_argument("--body-timeout", type=float, default=slow_clients.BODY_S)
    return asyncio.run(serve(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
