"""A loopback fake of Amazon Bedrock Runtime's InvokeModel for Claude, as the `anthropic`
SDK's Bedrock client calls it.

`POST /model/{modelId}/invoke` answers the Messages API's JSON;
`POST /model/{modelId}/invoke-with-response-stream` its stream events, each in an AWS
event-stream frame (aws_eventstream.py). Every request must be signed with SigV4 for the
service `bedrock` in the fake's region (the signature is computed again with botocore's own
signer from the known test secret and compared, as AWS does), or carry the fake's Bedrock
API key (`api_key`) as a Bearer token. The body is the Messages API's without `model` or
`stream` (the model is in the path, the stream in the operation) and with `anthropic_version`
`bedrock-2023-05-31`; its messages obey the Anthropic API's rules (anthropic_rules.py, the
400s worded the same, as Bedrock passes them on in a ValidationException). Tokens are
counted and cached as the Anthropic fake does.

Errors are AWS's: a status, `x-amzn-ErrorType` naming the exception (ThrottlingException,
ServiceUnavailableException, ModelNotReadyException, AccessDeniedException, ...) and
`{"message": ...}`. Replies are scripted as for the Anthropic fake (`Reply`, `text`, `tools`,
`error(status, "ThrottlingException", message, **headers)`); a reply's `stream_error` ends
the stream with an exception frame of that type (`throttlingException`, ...).
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from aiohttp import web
from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
from botocore.credentials import Credentials  # type: ignore[import-untyped]

from tests.fakes.anthropic_api import FakeAnthropic, Reply
from tests.fakes.anthropic_rules import InvalidRequest
from tests.fakes.aws_eventstream import chunk, exception

ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example keys: never real ones
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
VERSION = "bedrock-2023-05-31"
MAX_REQUEST_BYTES = 20 * 1024 * 1024  # InvokeModel's payload limit
AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
    r"(?P<service>[^/]+)/aws4_request, SignedHeaders=(?P<signed>[^,]+), "
    r"Signature=(?P<signature>[0-9a-f]{64})"
)


class AwsError(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


class FakeBedrock(FakeAnthropic):
    def __init__(self, region: str = "us-east-1", context_window: int = 200_000) -> None:
        super().__init__(context_window)
        self.region = region
        self.credentials = Credentials(ACCESS_KEY, SECRET_KEY)
        self.api_key: str | None = None  # set: a Bedrock API key, sent as a Bearer token
        self.session_token: str | None = None  # set: temporary keys, which need their token
        self.paths: list[str] = []  # of each request answered, as sent (the model in it)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_post("/model/{model_id}/invoke", self._invoke)
        app.router.add_post("/model/{model_id}/invoke-with-response-stream", self._invoke)
        return app

    async def _invoke(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            self._check_signature(request, raw)
            sent, body = self._body(request.match_info["model_id"], raw)
        except AwsError as exc:
            return aws_error(exc.status, exc.kind, exc.message)
        self.requests.append(sent)
        self.paths.append(request.raw_path)
        reply = self._next_reply(body)
        if reply.status != 200:
            return aws_error(reply.status, reply.error_type, reply.error_message, reply.headers)
        message = self._message(body, reply, self.cache.use(body["model"], body))
        self.usages.append(message["usage"])
        try:
            if request.path.endswith("/invoke-with-response-stream"):
                return await self._stream_frames(request, message, reply)
            if reply.hold:
                await reply.hold.wait()
            return web.json_response(message)
        except (asyncio.CancelledError, ConnectionResetError):
            self.disconnects += 1
            raise

    def _check_signature(self, request: web.Request, raw: bytes) -> None:
        """As AWS checks it: the key is known, the scope is this region's `bedrock`, and the
        signature over the signed headers and the body is the one the secret makes. Or
        the request carries the Bedrock API key as a Bearer token."""
        authorization = request.headers.get("Authorization", "")
        if authorization.startswith("Bearer "):
            if self.api_key is None or authorization != f"Bearer {self.api_key}":
                raise AwsError(403, "AccessDeniedException", "Invalid API Key format or value.")
            return
        found = AUTHORIZATION.fullmatch(authorization)
        if found is None:
            raise AwsError(403, "AccessDeniedException", "Missing Authentication Token")
        if found["key"] != self.credentials.access_key:
            message = "The security token included in the request is invalid."
            raise AwsError(403, "UnrecognizedClientException", message)
        if found["region"] != self.region or found["service"] != "bedrock":
            message = f"Credential should be scoped to a valid region, not '{found['region']}'."
            raise AwsError(403, "InvalidSignatureException", message)
        signed = found["signed"].split(";")
        token = request.headers.get("x-amz-security-token")
        if self.session_token is not None and (
            token != self.session_token or "x-amz-security-token" not in signed
        ):
            message = "The security token included in the request is invalid."
            raise AwsError(403, "UnrecognizedClientException", message)
        if "host" not in signed or "x-amz-date" not in signed:
            raise AwsError(403, "InvalidSignatureException", "host and x-amz-date must be signed")
        headers = {name: request.headers.get(name, "") for name in signed}
        url = f"{request.scheme}://{request.host}{request.raw_path}"
        aws = AWSRequest(method=request.method, url=url, headers=headers, data=raw)
        aws.context["timestamp"] = headers["x-amz-date"]
        signer = SigV4Auth(self.credentials, "bedrock", self.region)
        expected = signer.signature(signer.string_to_sign(aws, signer.canonical_request(aws)), aws)
        if expected != found["signature"]:
            raise AwsError(
                403,
                "InvalidSignatureException",
                "The request signature we calculated does not match the signature you "
                "provided. Check your AWS Secret Access Key and signing method.",
            )

    def _body(self, model: str, raw: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
        """The body as sent, and as the Messages API would take it (the model from the
        path); or the ValidationException Bedrock answers instead."""
        try:
            body = json.loads(raw)
        except ValueError:
            raise AwsError(400, "ValidationException", "Malformed input request") from None
        for key in ("model", "stream"):
            if key in body:
                self.refused.append((body, f"extraneous key [{key}]"))
                raise AwsError(
                    400,
                    "ValidationException",
                    f"Malformed input request: #: extraneous key [{key}] is not permitted, "
                    "please reformat your input and try again.",
                )
        if body.get("anthropic_version") != VERSION:
            self.refused.append((body, f"anthropic_version {body.get('anthropic_version')!r}"))
            raise AwsError(
                400,
                "ValidationException",
                f"Invalid API version {body.get('anthropic_version')!r}: "
                f"anthropic_version must be {VERSION}",
            )
        checked = {k: v for k, v in body.items() if k != "anthropic_version"} | {"model": model}
        try:
            self._check(checked)
        except InvalidRequest as exc:
            self.refused.append((body, str(exc)))
            raise AwsError(400, "ValidationException", str(exc)) from None
        return body, checked

    async def _stream_frames(
        self, request: web.Request, message: dict[str, Any], reply: Reply
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "application/vnd.amazon.eventstream"}
        )
        await response.prepare(request)
        start = {**message, "content": [], "stop_reason": None}
        start["usage"] = {**message["usage"], "output_tokens": 1}
        await response.write(chunk({"type": "message_start", "message": start}))
        for index, block in enumerate(message["content"]):
            for event in _block_events(index, block):
                await response.write(chunk(event))
            if index == 0 and reply.hold:
                await reply.hold.wait()
            if reply.stream_cut:
                return response
            if reply.stream_error:
                await response.write(exception(reply.stream_error, "The model is busy."))
                return response
        delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
        metrics = {"inputTokenCount": message["usage"]["input_tokens"]}
        await response.write(
            chunk({"type": "message_delta", "delta": delta, "usage": message["usage"]})
        )
        await response.write(
            chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": metrics})
        )
        return response


def _block_events(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    """A content block's start, its deltas (text by words, a tool's input in two halves of
    its JSON) and its stop."""
    start: dict[str, Any]
    if block["type"] == "text":
        start = {"type": "text", "text": ""}
        words = re.findall(r"\S+\s*|\s+", block["text"]) or [""]
        deltas = [{"type": "text_delta", "text": word} for word in words]
    else:
        start = {**block, "input": {}}
        raw = json.dumps(block["input"])
        halves = (raw[: len(raw) // 2], raw[len(raw) // 2 :])
        deltas = [{"type": "input_json_delta", "partial_json": half} for half in halves]
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def aws_error(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    """An error as AWS's REST-JSON services send it."""
    named = {
        "x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/",
        "x-amzn-RequestId": "0b5c1a6e-fake-4c1e-9d0e-request",
    }
    return web.json_response({"message": message}, status=status, headers=named | (headers or {}))
