"""The model side of `switchboard init`: which provider answers (Anthropic's API, Claude on
Amazon Bedrock, Claude on Google Vertex AI, an OpenAI-compatible server, or the offline model)
and, optionally, a fallback tried when it cannot answer. Each is one `ModelAnswer`, from the
flags (`--provider`, `--fallback`, each with its `--model`, `--region`, ...) or asked
(init_provider_questions.py); checked as `check-config --probe` checks it; written as
`[provider]` and a `[providers.<kind>]` entry, its secrets as `${NAME}`s kept in the env file."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr

from adapters.platform_setup import Given, Shape
from adapters.server.credential_shapes import ANTHROPIC_KEY
from config.providers import Connection

KINDS = ("anthropic", "bedrock", "vertex", "openai")  # what may answer; "offline" besides
MODELS = {  # each kind's default model: Claude Sonnet 4.5, as each platform names it
    "anthropic": "claude-sonnet-4-5",
    "bedrock": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "vertex": "claude-sonnet-4-5@20250929",
}
NAMES = {
    "anthropic": "Anthropic's API",
    "bedrock": "Claude on Amazon Bedrock",
    "vertex": "Claude on Google Vertex AI",
    "openai": "an OpenAI-compatible server",
}
OPENAI_URL = "https://api.openai.com/v1"
FALLBACK = "fallback-"  # the fallback's flags: --fallback-model, --fallback-region, ...

MODEL = Shape("a model name", re.compile(r"\S+"), "has no spaces (e.g. gpt-4.1-mini)")
URL = Shape(
    "a base URL", re.compile(r"https?://\S+"), "starts with http:// or https:// (the API's root)"
)
REGION = Shape(
    "a cloud region",
    re.compile(r"global|[a-z]{2}(-[a-z]+)+-?\d+"),
    "looks like us-east-1 (AWS), us-east5 or global (Google)",
)
PROJECT = Shape(
    "a Google Cloud project id",
    re.compile(r"[a-z][a-z0-9-]{4,28}[a-z0-9]"),
    "is 6 to 30 lower-case letters, digits or - (console.cloud.google.com)",
)
ACCESS_KEY_ID = Shape(
    "an AWS access key id", re.compile(r"(AKIA|ASIA)[A-Z0-9]{16}"), "starts with AKIA or ASIA"
)
SECRET_KEY = Shape(
    "an AWS secret access key", re.compile(r"[A-Za-z0-9/+=]{40}"), "has 40 characters"
)
API_KEY = Shape(
    "an API key",
    re.compile(r"\S+"),
    "has no spaces (a local server that wants none: any text, e.g. ollama)",
)


@dataclass
class ModelAnswer:
    """One connection as answered."""

    kind: str  # one of KINDS
    model: str
    api_key: str | None = None  # anthropic, openai
    base_url: str | None = None  # openai: the server; the others: a proxy's (or a fake's)
    region: str | None = None  # bedrock, vertex
    project_id: str | None = None  # vertex
    aws_access_key_id: str | None = None  # bedrock; None: the AWS default chain
    aws_secret_access_key: str | None = None

    @property
    def label(self) -> str:
        """What it is called in init's lines: the key's name for Anthropic's API."""
        if self.kind == "anthropic":
            return "Anthropic API key"
        where = f" in {self.region}" if self.region else f" at {self.base_url}"
        return f"{NAMES[self.kind]} ({self.model}{where})"

    def secrets(self) -> list[str]:
        keys = [self.api_key, self.aws_access_key_id, self.aws_secret_access_key]
        return [k for k in keys if k]

    def connection(self) -> Connection:
        def secret(value: str | None) -> SecretStr | None:
            return SecretStr(value) if value else None

        return Connection(
            kind=self.kind,
            model=self.model,
            api_key=secret(self.api_key),
            base_url=self.base_url,
            region=self.region,
            project_id=self.project_id,
            aws_access_key_id=secret(self.aws_access_key_id),
            aws_secret_access_key=secret(self.aws_secret_access_key),
        )

    def check(self) -> Callable[[], Awaitable[str]]:
        """Its probe: Anthropic's Models API, one token from Bedrock or Vertex, a completion
        of a few tokens from an OpenAI-compatible server (probe_providers.py)."""
        from adapters.server.probe_providers import probe_connection

        return probe_connection(self.connection())


def add_flags(init: Any) -> None:
    """`--provider` and `--fallback`, and what each kind needs, for each of the two."""
    for prefix, what in (("", "the model's provider"), (FALLBACK, "a fallback provider")):
        kind = "--fallback" if prefix else "--provider"
        init.add_argument(kind, choices=[*KINDS, *([] if prefix else ["offline"])], help=what)
        init.add_argument(f"--{prefix}model", help="the model (default: Claude Sonnet 4.5)")
        init.add_argument(f"--{prefix}api-key", help="anthropic or openai: the key")
        init.add_argument(f"--{prefix}base-url", help=f"openai: the server (default {OPENAI_URL})")
        init.add_argument(f"--{prefix}region", help="bedrock or vertex: the cloud region")
        init.add_argument(f"--{prefix}project-id", help="vertex: the Google Cloud project")
        init.add_argument(
            f"--{prefix}aws-access-key-id", help="bedrock (else the AWS default chain)"
        )
        init.add_argument(f"--{prefix}aws-secret-access-key", help="bedrock, with the key id")


def _flag(args: argparse.Namespace, prefix: str, name: str) -> Any:
    return getattr(args, (prefix + name).replace("-", "_"))


def from_flags(args: argparse.Namespace, prefix: str = "") -> ModelAnswer | None:
    """The connection the flags give (None: the offline model, or no fallback)."""
    kind = args.fallback if prefix else _primary_kind(args)
    if kind in (None, "offline"):
        return None
    key = _flag(args, prefix, "api-key")
    url = _flag(args, prefix, "base-url")
    if not prefix and kind == "anthropic":
        key = key or args.anthropic_key
        url = url or args.anthropic_api_base_url
    return ModelAnswer(
        kind,
        _flag(args, prefix, "model") or MODELS.get(kind, ""),
        api_key=key,
        base_url=url or (OPENAI_URL if kind == "openai" else None),
        region=_flag(args, prefix, "region"),
        project_id=_flag(args, prefix, "project-id"),
        aws_access_key_id=_flag(args, prefix, "aws-access-key-id"),
        aws_secret_access_key=_flag(args, prefix, "aws-secret-access-key"),
    )


def _primary_kind(args: argparse.Namespace) -> str | None:
    if args.offline:
        return "offline"
    return args.provider or ("anthropic" if args.anthropic_key else None)


def missing(args: argparse.Namespace) -> list[str]:
    """The model's flags --non-interactive needs and was not given."""
    if _primary_kind(args) is None:
        return ["--anthropic-key, --offline or --provider KIND"]
    wanted: list[str] = []
    for prefix in ("", FALLBACK):
        answer = from_flags(args, prefix)
        if answer is None:
            continue
        needs = {
            "anthropic": ["api-key"],
            "bedrock": ["region"],
            "vertex": ["region", "project-id"],
            "openai": ["model", "api-key"],
        }[answer.kind]
        if not prefix and answer.kind == "anthropic":
            wanted += [] if answer.api_key else ["--anthropic-key"]
            continue
        wanted += [f"--{prefix}{n}" for n in needs if not _flag(args, prefix, n)]
        if bool(answer.aws_access_key_id) != bool(answer.aws_secret_access_key):
            wanted.append(f"--{prefix}aws-access-key-id with --{prefix}aws-secret-access-key")
    return wanted


def given(answer: ModelAnswer | None, prefix: str = "") -> list[Given]:
    """Its answers of a checked shape, by their flags (the connection is checked whole)."""
    if answer is None:
        return []
    key = ANTHROPIC_KEY if answer.kind == "anthropic" else API_KEY
    key_flag = "--anthropic-key" if not prefix and answer.kind == "anthropic" else "api-key"
    fields = [
        (key_flag, answer.api_key, key),
        ("model", answer.model or None, MODEL),
        ("base-url", answer.base_url, URL),
        ("region", answer.region, REGION),
        ("project-id", answer.project_id, PROJECT),
        ("aws-access-key-id", answer.aws_access_key_id, ACCESS_KEY_ID),
        ("aws-secret-access-key", answer.aws_secret_access_key, SECRET_KEY),
    ]
    return [
        Given(answer.label, flag if flag.startswith("--") else f"--{prefix}{flag}", value, shape)
        for flag, value, shape in fields
    ]


# -- what is written ---------------------------------------------------------------------


def _variables(answer: ModelAnswer, fallback: bool) -> dict[str, str]:
    """The env file's name of each secret it has, by its key in the TOML."""
    if fallback:
        prefix = "SWITCHBOARD_FALLBACK_"
        key = prefix + "API_KEY"
    else:
        prefix = "SWITCHBOARD_"
        key = "ANTHROPIC_API_KEY" if answer.kind == "anthropic" else "OPENAI_API_KEY"
    return {
        "api_key": key,
        "aws_access_key_id": prefix + "AWS_ACCESS_KEY_ID",
        "aws_secret_access_key": prefix + "AWS_SECRET_ACCESS_KEY",
    }


def section(answer: ModelAnswer, *, fallback: bool) -> tuple[list[str], dict[str, str]]:
    """Its keys in the TOML (`${NAME}` for each secret) and the env file's secrets."""
    names = _variables(answer, fallback)
    lines = [f'kind = "{answer.kind}"', f"model = {json.dumps(answer.model)}"]
    secrets: dict[str, str] = {}
    for key, value in [
        ("region", answer.region),
        ("project_id", answer.project_id),
        ("base_url", answer.base_url),
        ("api_key", answer.api_key),
        ("aws_access_key_id", answer.aws_access_key_id),
        ("aws_secret_access_key", answer.aws_secret_access_key),
    ]:
        if not value:
            continue
        if key in names:
            secrets[names[key]] = value
            value = "${" + names[key] + "}"
        lines.append(f"{key} = {json.dumps(value)}")  # a JSON string is a TOML one
    if answer.kind == "bedrock" and not answer.aws_access_key_id:
        lines.append("# credentials: the AWS default chain (environment, profile, instance role)")
    if answer.kind == "vertex":
        lines.append("# credentials: Google's application default credentials")
    return lines, secrets
