"""The model side of `switchboard check-config --probe`: `[provider]` and each `[providers.<name>]`
entry some agent's chain uses, each once per (connection, model) an agent uses; an entry no
chain names is said to be unused and left alone. Each probe is the cheapest question that
tells a key, a model and a server apart: Anthropic's Models API (no tokens), one token from
Claude on Bedrock or Vertex (which have no Models API), a completion of a few tokens from an
OpenAI-compatible server. A refusal says what was refused and what to change; a server that
could not be asked says that nothing was checked. The SDKs are imported only when a probe
runs."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from adapters.platform import Probe
from adapters.server.providers import anthropic_client_of, build_provider
from config.errors import ConfigError, CredentialRefused, PlatformUnreachable
from config.providers import DEFAULT, Connection, Link
from config.schema import SwitchboardConfig
from runtime.errors import Failure, ProviderError

UNREACHABLE = frozenset({Failure.UNREACHABLE, Failure.OVERLOADED, Failure.RATE_LIMITED})
# What a refusal is about, from the platform's own words (status, error kind, message).
ABOUT_MODEL = re.compile(r"\b404\b|not_?found|no model|model identifier|does not exist", re.I)
NOT_REACHED = re.compile(r"^could not reach the .* API: ")  # said once, by the line
ABOUT_BILLING = re.compile(r"\b402\b|credit|quota|billing", re.I)


class _Explained(CredentialRefused):
    """A refusal whose words say what to change."""


def used_links(config: SwitchboardConfig) -> tuple[list[Link], list[str]]:
    """Every (connection, model) to probe, the default's own first, each once; and the
    entries no agent's chain names (offline connections have nothing to probe)."""
    found: dict[tuple[str, str], Link] = {
        (DEFAULT, config.provider.model): Link(DEFAULT, config.provider)
    }
    for workspace in config.workspaces:
        for agent in workspace.agents:
            for link in config.chain_of(workspace, agent):
                found.setdefault((link.name, link.connection.model), link)
    named = {name for name, _ in found}
    unused = [name for name in config.providers if name not in named]
    return [link for link in found.values() if link.connection.kind != "offline"], unused


def provider_checks(config: SwitchboardConfig) -> tuple[list[Probe], list[str]]:
    """A check per used (connection, model), by where it is written; a line per unused entry."""
    links, unused = used_links(config)
    checks = [(_where(link), probe_connection(link.connection)) for link in links]
    lines = [
        f"skip  providers.{name}: no agent's provider or fallback names it; not probed"
        for name in unused
    ]
    return checks, lines


def _where(link: Link) -> str:
    section = "provider" if link.name == DEFAULT else f"providers.{link.name}"
    return f"{section} ({link.connection.kind}, {link.connection.model})"


def probe_connection(connection: Connection) -> Callable[[], Awaitable[str]]:
    """The probe of one connection: what answered, or CredentialRefused saying what to
    change, or PlatformUnreachable (nothing checked)."""

    async def check() -> str:
        try:
            match connection.kind:
                case "anthropic":
                    return await _anthropic(connection)
                case "bedrock" | "vertex":
                    return await _claude(connection)
            return await _openai(connection)
        except _Explained:
            raise
        except CredentialRefused as exc:
            said = str(exc).rstrip(".")
            raise CredentialRefused(f"{said}; {_fix(connection, said)}") from None
        except PlatformUnreachable as exc:
            raise PlatformUnreachable(
                exc.platform, exc.host, exc.reason, then=_unreachable_fix(connection)
            ) from None

    return check


async def _anthropic(connection: Connection) -> str:
    from runtime.providers.anthropic import check_model

    key = connection.api_key.get_secret_value() if connection.api_key else None
    return await check_model(connection.model, key, connection.base_url)


async def _claude(connection: Connection) -> str:
    """Claude on Bedrock or Vertex: a missing extra, or credentials that cannot sign a
    request (no AWS keys anywhere, no Google default credentials), are refusals here."""
    from runtime.providers.anthropic import check_claude

    key = connection.api_key.get_secret_value() if connection.api_key else None
    try:
        client = anthropic_client_of(connection, key, connection.attempt_timeout_s)
    except ConfigError as exc:  # the extra is missing
        raise _Explained(str(exc)) from None
    # The SDK's Bedrock client raises RuntimeError when boto3 finds no credentials.
    unsigned: tuple[type[Exception], ...] = (*client.auth_errors, RuntimeError)
    try:
        return await check_claude(client, connection.model)
    except unsigned as exc:
        raise CredentialRefused(f"{client.platform} credentials: {exc}") from None


async def _openai(connection: Connection) -> str:
    """An OpenAI-compatible server: a key missing, refused or out of credit, or a model it
    does not serve, is a refusal; no answer, an overload or a rate limit checked nothing."""
    from runtime.providers.openai_chat import OpenAIChatProvider

    try:
        provider = build_provider(connection, max_attempts=1)
    except ProviderError as exc:  # no key at all
        raise _Explained(str(exc)) from None
    assert isinstance(provider, OpenAIChatProvider)
    try:
        return await provider.probe()
    except ProviderError as exc:
        if exc.failure in UNREACHABLE:
            where = connection.base_url or "https://api.openai.com/v1"
            reason = _first_cause(exc) if exc.status is None else NOT_REACHED.sub("", str(exc))
            raise PlatformUnreachable("the OpenAI-compatible API", where, reason) from None
        raise CredentialRefused(str(exc)) from None
    finally:
        await provider.close()


def _first_cause(exc: BaseException) -> str:
    """What went wrong first, in its own words: the SDK's aiohttp transport calls a refused
    connection a timeout ("Request timed out"), its cause says "Connect call failed"."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return str(exc)


def _fix(connection: Connection, said: str) -> str:
    """What to change, for a refusal worded `said`."""
    if ABOUT_MODEL.search(said):
        return f"set model to one {_serving(connection)}"
    if ABOUT_BILLING.search(said):
        return "add credit or raise the quota of the account this key belongs to"
    match connection.kind:
        case "bedrock":
            return (
                "check aws_access_key_id and aws_secret_access_key (or api_key, or boto3's own "
                f"credentials), and that the account may invoke {connection.model} in "
                f"{connection.region}"
            )
        case "vertex":
            return (
                "check access_token (or application default credentials: `gcloud auth "
                f"application-default login`), and that project {connection.project_id} has "
                f"{connection.model} enabled in {connection.region}"
            )
        case "anthropic":
            return "check api_key (else ANTHROPIC_API_KEY)"
    return "check api_key (else OPENAI_API_KEY)"


def _unreachable_fix(connection: Connection) -> str:
    if connection.kind in ("bedrock", "vertex"):
        return "nothing was checked: check region (and base_url), or try again later"
    return "nothing was checked: check base_url and that the server is up, or try again later"


def _serving(connection: Connection) -> str:
    match connection.kind:
        case "anthropic":
            return "this key may use"
        case "bedrock" | "vertex":
            return f"{connection.kind.title()} serves in {connection.region}"
    return "the server serves"
