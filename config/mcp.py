"""`[[workspaces.mcp_servers]]`: Model Context Protocol servers whose tools a workspace's agents
may use, reached over stdio (`command`, `args`, `env`) or streamable HTTP (`url`, `headers`).
An agent names them in its `tools` as `<server>.<tool>`, or `<server>.*` for all of a
server's tools."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

APPROVAL_TIMEOUT_S = 600.0  # how long a tool call waits for an operator's answer by default
MAX_APPROVAL_TIMEOUT_S = 86_400.0

# No "__": the model calls a tool `<server>__<tool>`, so a server name holding it could
# collide with another server's tool.
ServerName = Annotated[str, Field(pattern=r"^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$", max_length=32)]


class McpServerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: ServerName
    command: str | None = None  # stdio: the program that is the server
    args: list[str] = []
    # A stdio server's environment is PATH, HOME, LANG and TZ (and the few harmless variables
    # the SDK adds), plus these (values may be ${VAR}); never Switchboard's own secrets.
    env: dict[str, SecretStr] = {}
    url: str | None = None  # streamable HTTP: the server's endpoint
    headers: dict[str, SecretStr] = {}  # sent with every HTTP request (an Authorization token)
    timeout_s: float = Field(60.0, gt=0, le=3600)  # one tool call's time limit
    # true: each call of any of its tools waits for an operator's approval; a list: of these
    # tools (the server's own names). No answer within approval_timeout_s is a no.
    requires_approval: bool | list[Annotated[str, Field(min_length=1)]] = False
    approval_timeout_s: float = Field(APPROVAL_TIMEOUT_S, gt=0, le=MAX_APPROVAL_TIMEOUT_S)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("set either command (a stdio server) or url (streamable HTTP)")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError("url must be an http:// or https:// address")
        if self.url is not None and (self.args or self.env):
            raise ValueError("args and env are for a stdio server (command), not a url")
        if self.command is not None and self.headers:
            raise ValueError("headers are for an HTTP server (url), not a command")
        return self


def url_secrets(url: str) -> list[str]:
    """The parts of a server's URL that may be credentials (a password, a query's values of
    8 characters or more, as `?key=...` tokens are): redacted from logs, masked when shown."""
    parts = urlsplit(url)
    found = [parts.password] if parts.password else []
    return found + [v for _, v in parse_qsl(parts.query) if len(v) >= 8]


def shown_url(url: str) -> str:
    """`url` as check-config and the logs may print it."""
    for secret in url_secrets(url):
        url = url.replace(secret, "***")
    return url


def mcp_reference(name: str, servers: dict[str, McpServerConfig]) -> str | None:
    """What is wrong with an agent's `tools` entry that names an MCP tool (`server.tool` or
    `server.*`), or None; entries without a dot are not MCP references."""
    server, dot, tool = name.partition(".")
    if not dot:
        return None
    if server not in servers:
        return f"names MCP server {server!r}, which is not under [[workspaces.mcp_servers]]"
    if not tool:
        return f"names no tool of MCP server {server!r} (write {server}.<tool> or {server}.*)"
    return None
