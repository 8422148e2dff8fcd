"""Claude through the official SDK, on Anthropic's API, Bedrock or Vertex: streaming,
retries, errors.

Lowering (anthropic_lowering.py) is neutral transcript -> SDK params with the invariant check
before anything is sent; the platform's client (anthropic_clients.py) takes it from there.
SDK errors are mapped to `ProviderError` in one place, each with its `Failure` (whatever
platform named it: Anthropic's error types, Bedrock's exceptions, Google's statuses) and the
wait the platform asked for. Retries are ours (the SDK's are turned off) so that the waits
use the runtime's clock and each retry is audited.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Mapping
from typing import Any

import anthropic
import httpx2

from config.errors import CredentialRefused, PlatformUnreachable
from runtime.clock import Clock, SystemClock
from runtime.errors import ContextWindowExceededError, Failure, ProviderError, failure_of
from runtime.providers.anthropic_body import encoded_body
from runtime.providers.anthropic_clients import Client, anthropic_client
from runtime.providers.anthropic_lowering import lower_request
from runtime.providers.anthropic_post import Poster
from runtime.providers.anthropic_stream import read_stream
from runtime.providers.base import (
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    TextSink,
)

__all__ = ["AnthropicProvider", "check_claude", "check_model", "lower_request"]

log = logging.getLogger(__name__)

WINDOW_TIMEOUT_S = 10.0  # the Models API asked at start: a slow answer does not hold it up
MAX_RETRY_WAIT_S = 60.0  # a longer Retry-After is not waited for here: a fallback may be
# How the API words a request that does not fit the context window (input alone; input plus
# max_tokens), and how Bedrock words it when it answers itself.
CONTEXT_EXCEEDED = re.compile(
    r"prompt is too long|input length and `max_tokens` exceed context limit"
    r"|input is too long for requested model",
    re.IGNORECASE,
)
# A 400 that is the account's credit, not the request.
NO_CREDIT = re.compile(r"credit balance is too low", re.IGNORECASE)
# The failure a kind of error means, in lower case, whoever named it: Anthropic's error types;
# Bedrock's exceptions (in a header over HTTP, spelled from a lower-case letter in a stream);
# Google's statuses from Vertex.
FAILURE_OF_KIND = {
    "rate_limit_error": Failure.RATE_LIMITED,
    "overloaded_error": Failure.OVERLOADED,
    "api_error": Failure.OVERLOADED,
    "timeout_error": Failure.OVERLOADED,
    "authentication_error": Failure.AUTH,
    "permission_error": Failure.AUTH,
    "billing_error": Failure.BILLING,
    "throttlingexception": Failure.RATE_LIMITED,
    "servicequotaexceededexception": Failure.BILLING,
    "serviceunavailableexception": Failure.OVERLOADED,
    "modelnotreadyexception": Failure.OVERLOADED,
    "internalserverexception": Failure.OVERLOADED,
    "modelstreamerrorexception": Failure.OVERLOADED,
    "modeltimeoutexception": Failure.OVERLOADED,
    "modelerrorexception": Failure.OVERLOADED,
    "accessdeniedexception": Failure.AUTH,
    "unrecognizedclientexception": Failure.AUTH,
    "invalidsignatureexception": Failure.AUTH,
    "expiredtokenexception": Failure.AUTH,
    "resource_exhausted": Failure.RATE_LIMITED,
    "unavailable": Failure.OVERLOADED,
    "internal": Failure.OVERLOADED,
    "deadline_exceeded": Failure.OVERLOADED,
    "unauthenticated": Failure.AUTH,
    "permission_denied": Failure.AUTH,
}


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait the response asked for, in seconds (`retry-after-ms`, else `retry-after`)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name, "")) * scale
        except ValueError:
            continue
        if value >= 0:
            return value
    return None


def _kind_and_message(exc: anthropic.APIStatusError) -> tuple[str, str]:
    """The error's kind and wording, from the body as Anthropic, Google or AWS shape it."""
    body: Any = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else {}
    aws_kind = exc.response.headers.get("x-amzn-errortype", "") or str(body.get("__type", ""))
    kind = error.get("type") or error.get("status") or aws_kind.split(":")[0].split("#")[-1]
    message = error.get("message") or body.get("message") or body.get("Message") or exc.message
    return str(kind), str(message)


# How the SDK's Bedrock and Vertex clients say they found no credentials (a bare RuntimeError):
# "Could not resolve AWS credentials from session", "... API token from the environment".
NO_CREDENTIALS = "Could not resolve"


def map_api_error(exc: Exception, platform: str = "Anthropic API") -> ProviderError:
    if isinstance(exc, anthropic.APIStatusError):
        kind, message = _kind_and_message(exc)
        status = exc.status_code
        text = f"{platform} {status} {kind}: {message}".strip()
        if status == 400 and CONTEXT_EXCEEDED.search(message):
            counted = re.search(r": (\d+)", message)
            return ContextWindowExceededError(
                text, status=status, request_tokens=int(counted.group(1)) if counted else None
            )
        failure = FAILURE_OF_KIND.get(kind.lower())
        if failure is None and NO_CREDIT.search(message):
            failure = Failure.BILLING
        if failure is None:  # by the status; an error event mid-stream (in a 200) is the server's
            failure = failure_of(status) if status >= 400 else Failure.OVERLOADED
        wait = retry_after(exc.response.headers) if status >= 400 else None
        return ProviderError(text, status=status, failure=failure, retry_after=wait)
    if isinstance(exc, (anthropic.APITimeoutError, httpx2.TimeoutException)):
        return ProviderError(f"{platform} timed out: {exc}", failure=Failure.UNREACHABLE)
    # httpx2's own errors: the connection failed while the answer streamed in
    if isinstance(exc, (anthropic.APIConnectionError, httpx2.TransportError)):
        return ProviderError(f"could not reach {platform}: {exc}", failure=Failure.UNREACHABLE)
    if isinstance(exc, anthropic.CredentialsError):
        return ProviderError(f"{platform} credentials: {exc}", failure=Failure.AUTH)
    return ProviderError(f"Anthropic SDK error: {exc}", failure=Failure.INVALID)


class AnthropicProvider:
    """Claude. `client` says where (anthropic_clients.py: Anthropic's API, Bedrock, Vertex);
    without one, Anthropic's API with `api_key` and `base_url`."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_attempts: int = 5,
        clock: Clock | None = None,
        timeout_s: float = 600.0,
        client: Client | None = None,
    ) -> None:
        self.model = model
        self.max_attempts = max_attempts
        self._clock = clock or SystemClock()
        self._client = client or anthropic_client(api_key, base_url, timeout_s)
        sdk = self._client.sdk
        self._poster: Poster | None = None  # a body encoded beforehand: Anthropic's API alone
        if isinstance(sdk, anthropic.AsyncAnthropic) and self._client.sends_body:
            self._poster = Poster(sdk)
        self._failures: tuple[type[Exception], ...] = (
            anthropic.AnthropicError,
            httpx2.TransportError,
            ProviderError,
            *self._client.auth_errors,
        )

    async def close(self) -> None:
        await self._client.sdk.close()

    async def context_window(self) -> int | None:
        """The model's input window as the Models API tells it (`max_input_tokens`); None
        when it cannot be asked (Bedrock and Vertex have none) or does not say (the name's
        table is used then)."""
        models = self._client.models_api
        if models is None:
            return None
        try:
            found = await models.models.retrieve(self.model, timeout=WINDOW_TIMEOUT_S)
        except anthropic.APIError as exc:
            log.warning(
                "context window not known from the Models API; using the table's",
                extra={"model": self.model, "error": str(map_api_error(exc))},
            )
            return None
        return found.max_input_tokens

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        params = lower_request(request)
        body = encoded_body(request, params) if self._poster is not None else None
        attempt = 1
        while True:
            try:
                return await self._stream_once(params, body, on_text)
            except RuntimeError as exc:  # the Bedrock and Vertex clients', finding no credentials
                if not str(exc).startswith(NO_CREDENTIALS):
                    raise
                platform = self._client.platform
                error = ProviderError(f"{platform} credentials: {exc}", failure=Failure.AUTH)
                raise error from exc
            except self._failures as exc:
                error = self._error(exc)
                if not error.retryable or attempt >= self.max_attempts:
                    raise error from exc
                delay = _retry_delay(error, attempt)
                log.warning(
                    "provider retry",
                    extra={
                        "platform": self._client.platform,
                        "attempt": attempt,
                        "delay_s": delay,
                        "failure": error.failure.value,
                        "error": str(error),
                    },
                )
                on_retry(attempt, delay, str(error))
                await self._clock.sleep(delay)
                attempt += 1

    def _error(self, exc: Exception) -> ProviderError:
        platform = self._client.platform
        if isinstance(exc, ProviderError):
            return exc
        if isinstance(exc, self._client.auth_errors):
            return ProviderError(f"{platform} credentials: {exc}", failure=Failure.AUTH)
        return map_api_error(exc, platform)

    async def _stream_once(
        self, params: dict[str, Any], body: bytes | None, on_text: TextSink
    ) -> ProviderResponse:
        if body is not None and self._poster is not None:  # encoded: the bytes `create` sends
            async with self._poster.post(body) as response:
                return await read_stream(response, on_text)
        create = self._client.sdk.messages.with_streaming_response.create
        extra = dict(self._client.body) or None
        async with create(**params, stream=True, extra_body=extra) as response:
            return await read_stream(response, on_text, self._client.aws_event_stream)


def _retry_delay(error: ProviderError, attempt: int) -> float:
    """What the platform asked for, if it is short; otherwise a jittered backoff."""
    if error.retry_after is not None and error.retry_after <= MAX_RETRY_WAIT_S:
        return error.retry_after
    backoff: float = min(8.0, 0.5 * 2 ** (attempt - 1))
    return backoff * (0.75 + random.random() / 2)


async def check_model(model: str, api_key: str | None, base_url: str | None = None) -> str:
    """Does this key reach this model? Asks the Models API for it (no tokens spent); what
    the API calls it, or CredentialRefused with the API's own reason (PlatformUnreachable when
    the API could not be asked)."""
    client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0)
    try:
        found = await client.models.retrieve(model)
    except anthropic.NotFoundError:
        raise CredentialRefused(f"Anthropic has no model {model!r} for this key") from None
    except anthropic.InternalServerError as exc:  # a 5xx: the key was not judged
        reason = f"{exc.status_code} {exc.message}"
        raise PlatformUnreachable("the Anthropic API", str(client.base_url), reason) from None
    except anthropic.APIStatusError as exc:
        raise CredentialRefused(str(map_api_error(exc))) from None
    except anthropic.APIConnectionError as exc:  # the key was not checked
        reason = str(exc.__cause__ or exc)
        raise PlatformUnreachable("the Anthropic API", str(client.base_url), reason) from None
    finally:
        await client.close()
    return f"model {found.id} ({found.display_name})"


async def check_claude(client: Client, model: str) -> str:
    """Do these credentials reach this model on Bedrock or Vertex? Neither has a Models API,
    so a request for one token is sent (about ten tokens are billed). CredentialRefused with
    the platform's reason; PlatformUnreachable when it could not be asked or was too busy to
    answer (nothing was checked). Closes `client`."""
    try:
        await client.sdk.messages.create(
            model=model,
            max_tokens=1,
            messages=[{"role": "user", "content": "ping"}],
            extra_body=dict(client.body) or None,
            timeout=WINDOW_TIMEOUT_S,
        )
    except (anthropic.APIError, httpx2.TransportError) as exc:
        error = map_api_error(exc, client.platform)
        if error.retryable:
            url = str(client.sdk.base_url)
            raise PlatformUnreachable(client.platform, url, str(error)) from None
        raise CredentialRefused(str(error)) from None
    finally:
        await client.sdk.close()
    return f"model {model} on {client.platform}"
