"""Where an `AnthropicProvider` sends its requests: Anthropic's API, or Claude on Amazon
Bedrock or Google Vertex AI through the `anthropic` SDK's own clients (its `bedrock` and
`vertex` extras). These serve Claude only.

The request is the same everywhere (anthropic_lowering.py): the platform's client moves the
model into the URL (Bedrock `/model/{id}/invoke-with-response-stream`, Vertex
`.../publishers/anthropic/models/{id}:streamRawPredict`) and signs it (SigV4 on Bedrock, a
Google access token on Vertex). The body's `anthropic_version` is set to the value each
platform documents (`bedrock-2023-05-31`, `vertex-2023-10-16`): the SDK would otherwise send
its own API date, which neither documents. Bedrock streams the Messages API's events in AWS
event-stream frames, Vertex in server-sent events as Anthropic does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import anthropic

from config.errors import ConfigError

SdkClient = (
    anthropic.AsyncAnthropic | anthropic.AsyncAnthropicBedrock | anthropic.AsyncAnthropicVertex
)

BEDROCK_VERSION = "bedrock-2023-05-31"
VERTEX_VERSION = "vertex-2023-10-16"


@dataclass(frozen=True, slots=True)
class Client:
    """An SDK client, and what differs about the platform it reaches."""

    sdk: SdkClient
    platform: str  # names it in errors and logs
    body: Mapping[str, str] = field(default_factory=dict)  # added to every request's body
    aws_event_stream: bool = False  # streams AWS event-stream frames, not server-sent events
    # What its credentials' library raises when it cannot sign a request (an expired SSO
    # session, a revoked Google refresh token): the key's failure, not the request's.
    auth_errors: tuple[type[Exception], ...] = ()

    @property
    def sends_body(self) -> bool:
        """Whether a body encoded beforehand goes as it is (Anthropic's API: Bedrock's and
        Vertex's clients rewrite the body's fields)."""
        return isinstance(self.sdk, anthropic.AsyncAnthropic) and not self.body

    @property
    def models_api(self) -> anthropic.AsyncAnthropic | None:
        """The client that can ask the Models API (Anthropic's API only)."""
        return self.sdk if isinstance(self.sdk, anthropic.AsyncAnthropic) else None


def _missing(extra: str) -> str:
    return f"Claude on {extra.title()} needs the {extra} extra: pip install 'switchboard[{extra}]'"


def _transport(timeout_s: float) -> anthropic.DefaultAioHttpClient:
    # The SDK's aiohttp transport: under 50 streams at once it spends less than half the CPU
    # of its default httpx one (docs/benchmarks.md, `python -m bench.provider_bench`).
    return anthropic.DefaultAioHttpClient(timeout=timeout_s)


def anthropic_client(api_key: str | None, base_url: str | None, timeout_s: float) -> Client:
    """Anthropic's API. None: the SDK reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL."""
    sdk = anthropic.AsyncAnthropic(
        api_key=api_key,
        base_url=base_url,
        max_retries=0,  # the provider retries, on the runtime's clock
        timeout=timeout_s,
        http_client=_transport(timeout_s),
    )
    return Client(sdk, "Anthropic API")


def bedrock_client(
    region: str,
    *,
    access_key: str | None = None,
    secret_key: str | None = None,
    session_token: str | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    timeout_s: float = 600.0,
) -> Client:
    """Claude on Amazon Bedrock in `region`. Requests are signed (SigV4) with the keys given,
    or with boto3's own chain (environment, profile, instance role) when none is; `api_key`
    is a Bedrock API key instead (a bearer token). `base_url` defaults to the region's
    `https://bedrock-runtime.{region}.amazonaws.com`."""
    try:
        from botocore.exceptions import BotoCoreError  # type: ignore[import-untyped]
    except ImportError:
        raise ConfigError(_missing("bedrock")) from None
    sdk = anthropic.AsyncAnthropicBedrock(
        aws_region=region,
        aws_access_key=access_key,
        aws_secret_key=secret_key,
        aws_session_token=session_token,
        api_key=api_key,
        base_url=base_url,
        max_retries=0,
        timeout=timeout_s,
        http_client=_transport(timeout_s),
    )
    body = {"anthropic_version": BEDROCK_VERSION}
    return Client(sdk, "Amazon Bedrock", body, aws_event_stream=True, auth_errors=(BotoCoreError,))


def vertex_client(
    region: str,
    project_id: str,
    *,
    access_token: str | None = None,
    base_url: str | None = None,
    timeout_s: float = 600.0,
) -> Client:
    """Claude on Google Vertex AI, in `project_id` and `region` (`global`, `us-east5`, ...).
    `access_token` is sent as it is, and expires (Google's in an hour): a long-lived process
    leaves it out, and google-auth's application default credentials (a service account's
    key file in GOOGLE_APPLICATION_CREDENTIALS, the instance's account) are loaded and
    refreshed as they expire. `base_url` defaults to the region's
    `https://{region}-aiplatform.googleapis.com/v1`."""
    try:
        from google.auth.exceptions import GoogleAuthError
    except ImportError:
        raise ConfigError(_missing("vertex")) from None
    sdk = anthropic.AsyncAnthropicVertex(
        region=region,
        project_id=project_id,
        access_token=access_token,
        base_url=base_url,
        max_retries=0,
        timeout=timeout_s,
        http_client=_transport(timeout_s),
    )
    body = {"anthropic_version": VERTEX_VERSION}
    return Client(sdk, "Google Vertex AI", body, auth_errors=(GoogleAuthError,))
