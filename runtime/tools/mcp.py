"""Tools from Model Context Protocol servers, through the official `mcp` SDK's client.

Each configured server is one `McpServer`: a task of its own holds the SDK's connection (a
stdio child process, or streamable HTTP), lists the server's tools, and pings it; when the
server dies or stops answering, the task connects again with backoff, and meanwhile its
tools answer a clear, retryable error at once instead of hanging the turn. A stdio server
starts with a tool's small environment (`environment.py`), never this process's. Every call
has the server's time limit, and a cancelled call (a stop, an interrupt, the limit) is
cancelled at the server too: the SDK sends the protocol's cancellation notification.

The model sees each tool as `<server>__<tool>` (the Anthropic API's names are
`^[a-zA-Z0-9_-]{1,64}$`, unique); an agent's `tools` list names them as `<server>.<tool>` or
`<server>.*`, which `McpTools.expand` turns into the offered names.

The SDK is imported only when a server is configured: it costs almost a second of start-up.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
from collections.abc import Iterable, Mapping
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from runtime.tasks import cancel_and_wait
from runtime.tools.base import Approval, ToolContext, ToolSpec
from runtime.tools.envelope import ToolResult
from runtime.tools.environment import tool_environment
from runtime.tools.mcp_results import envelope

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.client.session import ClientSession

log = logging.getLogger(__name__)

CONNECT_S = 15.0  # to start a server, initialize and list its tools
PING_EVERY_S = 5.0
MAX_BACKOFF_S = 30.0
MAX_NAME = 64


@dataclass(frozen=True, slots=True)
class McpServerSpec:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 60.0
    approval: Approval | None = None  # which of its tools wait for an operator's yes


def offered_name(server: str, tool: str) -> str:
    """The name the model calls `tool` of `server` by: within the API's pattern and length,
    a hash of the original kept where it had to be cut or changed (so two never collide)."""
    raw = f"{server}__{tool}"
    clean = re.sub(r"[^a-zA-Z0-9_-]", "_", raw)
    if clean == raw and len(clean) <= MAX_NAME:
        return clean
    digest = hashlib.sha256(raw.encode()).hexdigest()[:8]
    return f"{clean[: MAX_NAME - 9]}_{digest}"


class McpServer:
    def __init__(self, spec: McpServerSpec) -> None:
        self.spec = spec
        self.tools: dict[str, types.Tool] = {}  # by the server's own name
        self.error: str | None = "not started"
        self.ever_connected = False  # since it started: a failure now is a lost connection
        self._session: ClientSession | None = None
        self._attempted = asyncio.Event()  # the first connection succeeded or failed
        self._broken = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def connected(self) -> bool:
        return self._session is not None

    async def start(self) -> None:
        """Connect in the background; returns once the first attempt succeeded or failed
        (a failed server is retried with backoff, its tools answering an error meanwhile)."""
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"mcp-{self.spec.name}"
        )
        await self._attempted.wait()

    async def stop(self) -> None:
        """Disconnect; a stdio server's process is ended by the SDK's client on the way out."""
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    async def _connect(self, stack: AsyncExitStack) -> Any:
        """The SDK's transport streams, its resources closed with `stack`."""
        import httpx2
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client

        s = self.spec
        if s.url is not None:
            client = httpx2.AsyncClient(headers=dict(s.headers), timeout=s.timeout_s + 5)
            await stack.enter_async_context(client)
            return await stack.enter_async_context(
                streamable_http_client(s.url, http_client=client)
            )
        assert s.command is not None
        params = StdioServerParameters(
            command=s.command, args=list(s.args), env=tool_environment(s.env)
        )
        # The server's stderr comes through our logging (and so its redaction of secrets: a
        # server may print the token it was given), not straight onto our own stderr.
        read_fd, write_fd = os.pipe()
        relay = asyncio.get_running_loop().create_task(_relay_stderr(read_fd, s.name))
        stack.push_async_callback(_finish_relay, relay)
        with os.fdopen(write_fd, "w") as errlog:  # closed once the server holds its own copy
            return await stack.enter_async_context(stdio_client(params, errlog=errlog))

    async def _run(self) -> None:
        from mcp.client.session import ClientSession

        delay = 0.5
        while True:
            try:
                async with AsyncExitStack() as stack:
                    read, write = await self._connect(stack)
                    session = await stack.enter_async_context(ClientSession(read, write))
                    await asyncio.wait_for(session.initialize(), CONNECT_S)
                    self.tools = await asyncio.wait_for(_all_tools(session), CONNECT_S)
                    self._session, self.error = session, None
                    self.ever_connected = True
                    self._broken.clear()
                    self._attempted.set()
                    delay = 0.5
                    log.info(
                        "mcp server connected",
                        extra={"server": self.spec.name, "tools": len(self.tools)},
                    )
                    await self._watch(session)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # the SDK raises exception groups from its task groups
                self.error = _reason(exc)
            finally:
                self._session = None
            self._attempted.set()
            log.warning(
                "mcp server not connected; trying again",
                extra={"server": self.spec.name, "error": self.error, "delay_s": delay},
            )
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF_S)

    async def _watch(self, session: ClientSession) -> None:
        """Until the connection is found broken: by a call, or by a ping that fails."""
        while True:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow the stop's
            # cancellation as the wait ends, and this loop would go on, the stop waiting on it.
            with suppress(TimeoutError):
                async with asyncio.timeout(PING_EVERY_S):
                    await self._broken.wait()
            if self._broken.is_set():
                self.error = self.error or "the connection broke"
                return
            try:
                async with asyncio.timeout(PING_EVERY_S):
                    await session.send_ping()
            except Exception as exc:
                self.error = f"it stopped answering ({_reason(exc)})"
                return

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        session = self._session
        name = self.spec.name
        if session is None:
            return ToolResult.failure(
                "mcp_unavailable",
                f"MCP server {name!r} is not connected ({self.error}); it is being restarted",
                retryable=True,
            )
        try:
            result = await asyncio.wait_for(session.call_tool(tool, arguments), self.spec.timeout_s)
        except TimeoutError:
            return ToolResult.failure(
                "timeout", f"{name}.{tool} did not answer within {self.spec.timeout_s:g}s"
            )
        except MCPError as exc:
            if exc.code != types.CONNECTION_CLOSED:
                return ToolResult.failure("mcp_error", f"{name}.{tool}: {exc.error.message}")
            self.error = "the connection closed (the server ended)"
            self._broken.set()
            return ToolResult.failure(
                "mcp_unavailable",
                f"MCP server {name!r} closed the connection during the call; it is being restarted",
                retryable=True,
            )
        except Exception as exc:  # the transport broke under the call
            self.error = _reason(exc)
            self._broken.set()
            return ToolResult.failure(
                "mcp_unavailable",
                f"MCP server {name!r} failed during the call ({self.error}); it is being restarted",
                retryable=True,
            )
        if not isinstance(result, types.CallToolResult):
            return ToolResult.failure("mcp_error", f"{name}.{tool}: an answer it cannot take")
        return envelope(result)


async def _all_tools(session: ClientSession) -> dict[str, types.Tool]:
    """Every tool the server lists, page after page."""
    import mcp_types as types

    tools: dict[str, types.Tool] = {}
    cursor: str | None = None
    for _ in range(100):  # a server whose pages never end is cut off, not waited on forever
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        listing = await session.list_tools(params=params)
        tools.update({t.name: t for t in listing.tools})
        cursor = listing.next_cursor
        if not cursor:
            break
    return tools


async def _relay_stderr(fd: int, server: str) -> None:
    """Log each line a stdio server writes to its stderr until it closes it, always reading
    on (a server whose stderr pipe filled up would block); a line is logged at most 2,000
    characters long."""
    reader = asyncio.StreamReader()
    transport, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb")
    )
    pending = b""
    try:
        while chunk := await reader.read(65_536):
            *lines, pending = (pending + chunk).split(b"\n")
            pending = pending[-8_192:]
            for raw in lines:
                _log_stderr(server, raw)
        _log_stderr(server, pending)
    finally:
        transport.close()


def _log_stderr(server: str, raw: bytes) -> None:
    line = raw.decode(errors="replace").rstrip()
    if line:
        log.info("mcp server stderr", extra={"server": server, "line": line[:2000]})


async def _finish_relay(relay: asyncio.Task[None]) -> None:
    """After the server is gone: its last lines, then the relay ends (at most a second)."""
    try:
        async with asyncio.timeout(1.0):
            await asyncio.shield(relay)
    except TimeoutError:
        relay.cancel()


def _reason(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


class McpTool:
    """One tool of a server, as the runtime's tool registry offers it."""

    def __init__(self, server: McpServer, tool: types.Tool) -> None:
        self.server = server
        self.tool_name = tool.name
        description = tool.description or tool.title or tool.name
        self.spec = ToolSpec(
            offered_name(server.spec.name, tool.name),
            f"{description} (MCP server {server.spec.name})",
            dict(tool.input_schema) or {"type": "object"},
        )

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.server.call(self.tool_name, tool_input)


class McpTools:
    """Every configured server's tools, as they are listed now."""

    def __init__(self, specs: Iterable[McpServerSpec] = ()) -> None:
        self.servers = {s.name: McpServer(s) for s in specs}
        self._started = False

    async def start(self) -> None:
        self._started = True
        await asyncio.gather(*(s.start() for s in self.servers.values()))

    async def stop(self) -> None:
        self._started = False
        await asyncio.gather(*(s.stop() for s in self.servers.values()))

    async def apply(self, specs: Iterable[McpServerSpec]) -> None:
        """A reload: servers removed or changed are stopped, new or changed ones started (if
        these servers run here); the unchanged keep their connection. A call under way on a
        server that stops is answered as the server's failure."""
        wanted = {s.name: s for s in specs}
        going = [s for n, s in self.servers.items() if wanted.get(n) != s.spec]
        coming = [
            McpServer(spec)
            for n, spec in wanted.items()
            if n not in self.servers or self.servers[n].spec != spec
        ]
        await asyncio.gather(*(s.stop() for s in going))
        for server in going:
            del self.servers[server.spec.name]
        self.servers.update({s.spec.name: s for s in coming})
        if self._started:
            await asyncio.gather(*(s.start() for s in coming))

    def tools(self) -> dict[str, McpTool]:
        """By offered name."""
        found = {}
        for server in self.servers.values():
            for tool in server.tools.values():
                offered = McpTool(server, tool)
                found[offered.spec.name] = offered
        return found

    def expand(self, names: Iterable[str]) -> list[str]:
        """An agent's tools list with `server.tool` and `server.*` as offered names (a server
        not connected yet offers the tools it listed last, or none)."""
        out: dict[str, None] = {}  # in order, each once: the API refuses a tool offered twice
        for name in names:
            server_name, dot, tool = name.partition(".")
            server = self.servers.get(server_name) if dot else None
            if server is None:
                out[name] = None
                continue
            listed = list(server.tools) if tool == "*" else [tool]
            out.update((offered_name(server_name, t), None) for t in listed if t in server.tools)
        return list(out)
