"""`switchboard check-config --probe`: after the file is valid, what it names is tried for
real, one line per check, and whether all passed: each workspace's platform credentials (each
platform's `probes`: a Telegram bot token by `getMe`, ...), each provider an agent uses with
each model it uses (probe_providers.py), and each MCP server (started or reached, initialized, asked
for its tools). Every check runs side by side; none waits for another. A platform that cannot
be reached is told apart from one that refuses: its line says the credential was not checked.
Nothing is printed that a secret could be read from."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from adapters.platform import Probe
from adapters.platforms import platforms
from adapters.server.assembly import mcp_servers
from adapters.server.logs import Redactor
from adapters.server.probe_providers import provider_checks
from config.errors import CredentialRefused, PlatformUnreachable
from config.schema import SwitchboardConfig
from runtime.tools.mcp import McpServer


async def probe(config: SwitchboardConfig) -> tuple[list[str], bool]:
    models, unused = provider_checks(config)
    checks = models + _credentials(config)
    servers = [McpServer(spec) for spec in mcp_servers(config)]
    mcp = asyncio.ensure_future(_mcp(config, servers))
    found = await asyncio.gather(*(_run(check) for _, check in checks))
    mcp_lines, ok = await mcp
    # An error may quote what it was given (an HTTP error its URL, a token in it included).
    redactor = Redactor(config.secret_values())
    lines: list[str] = []
    for (where, _), (passed, said) in zip(checks, found, strict=True):
        ok = ok and passed
        lines.append(f"{'ok  ' if passed else 'FAIL'}  {where}: {redactor.redact(said)}")
    lines += [redactor.redact(line) for line in mcp_lines] + unused
    return lines or ["nothing to probe (no tokens, model key or MCP servers)"], ok


def _credentials(config: SwitchboardConfig) -> list[Probe]:
    checks: list[Probe] = []
    for w in config.workspaces:
        for platform in platforms():
            checks += [(f"workspace {w.id}: {key}", run) for key, run in platform.probes(w)]
    return checks


async def _run(check: Callable[[], Awaitable[str]]) -> tuple[bool, str]:
    try:
        return True, await check()
    except CredentialRefused as exc:
        return False, str(exc)
    except PlatformUnreachable as exc:
        return False, f"not checked: {exc}"


async def _mcp(config: SwitchboardConfig, servers: list[McpServer]) -> tuple[list[str], bool]:
    where = {m.name: (w.id, i) for w in config.workspaces for i, m in enumerate(w.mcp_servers)}
    await asyncio.gather(*(s.start() for s in servers))
    lines, ok = [], True
    for server in servers:
        workspace, index = where[server.spec.name]
        key = f"workspace {workspace}: mcp_servers[{index}] ({server.spec.name})"
        if server.connected:
            names = ", ".join(sorted(server.tools)) or "no tools"
            lines.append(f"ok    {key}: {len(server.tools)} tool(s): {names}")
        else:
            ok = False
            lines.append(f"FAIL  {key}: {server.error}")
    await asyncio.gather(*(s.stop() for s in servers))
    return lines, ok
