"""Requests on the public port that are not HTTP, or not well-formed HTTP (a folded header, a TLS
ClientHello on the plain port, garbage bytes): aiohttp answers 400 and closes, and logs each at
ERROR with a traceback on its `aiohttp.server` logger ("Error handling request from %s"). Anyone
who can reach the port could fill the log so. This filter, on that logger in each process that
owns the port, turns them into one WARNING line without a traceback, at most once a minute
per client; the next line says how many it left out meanwhile."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable

from aiohttp.http_exceptions import HttpProcessingError

LOGGER = "aiohttp.server"
ONCE_PER_S = 60.0
MAX_CLIENTS = 4096  # clients remembered at once; past that, the longest-quiet is forgotten
MESSAGE = "malformed HTTP request refused"


class MalformedRequests(logging.Filter):
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._last: OrderedDict[str, tuple[float, int]] = OrderedDict()  # when logged, left out

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, HttpProcessingError):
            return True  # anything else aiohttp says, as it says it
        client = str(record.args[0]) if isinstance(record.args, tuple) and record.args else "?"
        now = self._clock()
        last = self._last.get(client)
        if last is not None and now - last[0] < ONCE_PER_S:
            self._last[client] = (last[0], last[1] + 1)
            return False
        self._last[client] = (now, 0)
        self._last.move_to_end(client)
        while len(self._last) > MAX_CLIENTS:
            self._last.popitem(last=False)
        record.msg, record.args = MESSAGE, ()
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        record.__dict__.update(
            remote=client, reason=type(exc).__name__, left_out=last[1] if last else 0
        )
        return True


def install() -> None:
    """The filter on aiohttp's server logger, once per process."""
    logger = logging.getLogger(LOGGER)
    if not any(isinstance(f, MalformedRequests) for f in logger.filters):
        logger.addFilter(MalformedRequests())
