"""The model's questions of `switchboard init` on a terminal: which provider answers (Enter:
Anthropic's API, asked for its key as before), what that provider needs, then whether a
fallback stands in when it cannot answer, and the fallback's own questions. A connection is
checked whole once answered: refused, its questions are asked again (every other answer is
kept); unreachable, it may be kept unchecked."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable
from typing import Protocol

from adapters.platform_setup import Check, Shape
from adapters.server.credential_shapes import ANTHROPIC_KEY
from adapters.server.init_checks import model_check
from adapters.server.init_prompts import Refused, ask, required, yes
from adapters.server.init_providers import (
    ACCESS_KEY_ID,
    API_KEY,
    FALLBACK,
    KINDS,
    MODEL,
    MODELS,
    OPENAI_URL,
    PROJECT,
    REGION,
    SECRET_KEY,
    URL,
    ModelAnswer,
)


class Interview(Protocol):
    """What these questions ask through (`init_interview.Interview`)."""

    args: argparse.Namespace

    def text(self, prompt: str, shape: Shape, *, hidden: bool = False) -> str: ...

    def optional(self, prompt: str, shape: Shape) -> str | None: ...

    def credential(
        self, label: str, shape: Shape, prompt: str, check: Check, *, can_be_empty: bool = False
    ) -> str | None: ...

    def connection(self, answer: Callable[[], ModelAnswer]) -> ModelAnswer: ...


CHOICES = (
    "anthropic (Anthropic's API), bedrock (Claude on Amazon Bedrock), vertex (Claude on Google "
    "Vertex AI), openai (OpenAI, OpenRouter, Ollama, vLLM: any OpenAI-compatible server)"
)


def ask_models(interview: Interview) -> tuple[ModelAnswer | None, ModelAnswer | None]:
    """The model's provider (None: the offline model) and its fallback (None: none)."""
    args = interview.args
    kind = "offline" if args.offline else args.provider
    if kind is None:
        print(f"Which model answers: {CHOICES}, or offline (no model, no key).")
        kind = ask("Model provider [anthropic]: ", _kind(allow_offline=True))
    if kind == "offline":
        return None, None
    primary = _ask_connection(interview, kind, "")
    if primary is None:  # no Anthropic key: the offline model
        return None, None
    fallback_kind = args.fallback
    if fallback_kind is None:
        wanted = yes(
            "Add a fallback, tried when this one cannot answer (a rate limit, an outage, "
            "spent credit)?",
            default=False,
        )
        if not wanted:
            return primary, None
        fallback_kind = ask("Fallback provider: ", _kind(allow_offline=False))
    return primary, _ask_connection(interview, fallback_kind, FALLBACK)


def _kind(*, allow_offline: bool) -> Callable[[str], str]:
    names = [*KINDS, *(["offline"] if allow_offline else [])]

    def take(said: str) -> str:
        said = said.lower() or ("anthropic" if allow_offline else "")
        if said in names:
            return said
        close = difflib.get_close_matches(said, names, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise Refused(f"{said!r} is not a provider{hint}: answer {', '.join(names)}")

    return take


def _ask_connection(interview: Interview, kind: str, prefix: str) -> ModelAnswer | None:
    base_url = getattr(interview.args, f"{prefix}base_url".replace("-", "_"))
    if kind == "anthropic":
        return _anthropic(interview, prefix, base_url)
    questions = {"bedrock": _bedrock, "vertex": _vertex, "openai": _openai}[kind]
    return interview.connection(lambda: questions(interview, base_url))


def _anthropic(interview: Interview, prefix: str, base_url: str | None) -> ModelAnswer | None:
    if not prefix:  # as it was asked before the other providers: empty is the offline model
        key = interview.credential(
            "Anthropic API key",
            ANTHROPIC_KEY,
            "Anthropic API key (hidden; empty: the offline model): ",
            model_check(interview.args),
            can_be_empty=True,
        )
        url = base_url or interview.args.anthropic_api_base_url
        return None if key is None else ModelAnswer("anthropic", MODELS["anthropic"], key, url)
    from runtime.providers.anthropic import check_model

    model = MODELS["anthropic"]
    fallback_key = interview.credential(
        "fallback's Anthropic API key",
        ANTHROPIC_KEY,
        "Fallback's Anthropic API key (hidden): ",
        lambda key: check_model(model, key, base_url),
    )
    return ModelAnswer("anthropic", model, fallback_key, base_url)


def _or(default: str, shape: Shape) -> Callable[[str], str]:
    """An answer of this shape; empty: `default`."""
    of_shape = required(shape)
    return lambda said: of_shape(said) if said else default


def _bedrock(interview: Interview, base_url: str | None) -> ModelAnswer:
    region = interview.text("AWS region (e.g. us-east-1): ", REGION)
    model = ask(f"Model on Bedrock [{MODELS['bedrock']}]: ", _or(MODELS["bedrock"], MODEL))
    key_id = interview.optional(
        "AWS access key id (empty: the AWS default chain: environment, profile, instance role): ",
        ACCESS_KEY_ID,
    )
    secret = None
    if key_id:
        secret = interview.text("AWS secret access key (hidden): ", SECRET_KEY, hidden=True)
    return ModelAnswer(
        "bedrock",
        model,
        base_url=base_url,
        region=region,
        aws_access_key_id=key_id,
        aws_secret_access_key=secret,
    )


def _vertex(interview: Interview, base_url: str | None) -> ModelAnswer:
    region = interview.text("Google Cloud region (e.g. us-east5, or global): ", REGION)
    project = interview.text("Google Cloud project id: ", PROJECT)
    model = ask(f"Model on Vertex [{MODELS['vertex']}]: ", _or(MODELS["vertex"], MODEL))
    print(
        "  Credentials: Google's application default credentials (`gcloud auth "
        "application-default login`, or GOOGLE_APPLICATION_CREDENTIALS naming a service "
        "account's key file)."
    )
    return ModelAnswer("vertex", model, base_url=base_url, region=region, project_id=project)


def _openai(interview: Interview, base_url: str | None) -> ModelAnswer:
    if base_url is None:
        print(
            f"  OpenAI: {OPENAI_URL}; OpenRouter: https://openrouter.ai/api/v1; "
            "Ollama: http://127.0.0.1:11434/v1; vLLM: http://HOST:8000/v1"
        )
        base_url = ask(f"Base URL [{OPENAI_URL}]: ", _or(OPENAI_URL, URL))
    key = interview.text(
        "API key (hidden; a local server that wants none: any text): ", API_KEY, hidden=True
    )
    model = interview.text("Model (e.g. gpt-4.1-mini, openai/gpt-4o, llama3.2): ", MODEL)
    return ModelAnswer("openai", model, key, base_url)
