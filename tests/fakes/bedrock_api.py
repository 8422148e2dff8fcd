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

Embedding models answer on the same signed `POST /model/{modelId}/invoke`: Amazon Titan Text
Embeddings V2 (`{"inputText", "dimensions", "normalize"}`: one text, at most 50,000 characters
and 8,192 tokens, not empty) and Cohere Embed v3 (`{"texts", "input_type", "truncate"}`: at
most 96 texts of at most 2,048 characters, `input_type` required). Their bodies are checked
as Bedrock's JSON schemas check them (a missing or extraneous key, a wrong type or enum, a
limit: a ValidationException worded as Bedrock words it); vectors are deterministic
(`embedding_of`). `embedded` holds each request's texts; a scripted error is answered too.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import uuid
from typing import Any

from aiohttp import web
from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
from botocore.credentials import Credentials  # type: ignore[import-untyped]

from tests.fakes.anthropic_api import FakeAnthropic, Reply
from tests.fakes.anthropic_rules import InvalidRequest
from tests.fakes.aws_eventstream import chunk, exception
from tests.fakes.openai_api import embedding_of

ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example keys: never real ones
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
VERSION = "bedrock-2023-05-31"
MAX_REQUEST_BYTES = 20 * 1024 * 1024  # InvokeModel's payload limit
AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
    r"(?P<service>[^/]+)/aws4_request, SignedHeaders=(?P<signed>[^,]+), "
    r"Signature=(?P<signature>[0-9a-f]{64})"
)
EMBEDDING_MODEL = r"{model_id:(?:amazon\.titan-embed-text-v2|cohere\.embed-[a-z]+-v3)[^/]*}"
TITAN_KEYS = {"inputText", "dimensions", "normalize", "embeddingTypes"}
TITAN_DIMENSIONS = (256, 512, 1024)
TITAN_MAX_CHARS, TITAN_MAX_TOKENS = 50_000, 8_192
COHERE_KEYS = {"texts", "input_type", "truncate", "embedding_types"}
COHERE_INPUT_TYPES = ("search_document", "search_query", "classification", "clustering")
COHERE_TRUNCATE = ("NONE", "START", "END")
COHERE_MAX_TEXTS, COHERE_MAX_CHARS, COHERE_DIMENSIONS = 96, 2_048, 1_024
CHARS_PER_TOKEN = 4


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
        self.embedded: list[list[str]] = []  # the texts of each embeddings request answered

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_post(f"/model/{EMBEDDING_MODEL}/invoke", self._embed)
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

    async def _embed(self, request: web.Request) -> web.Response:
        raw = await request.read()
        model = request.match_info["model_id"]
        body: Any = None
        try:
            self._check_signature(request, raw)
            try:
                body = json.loads(raw)
            except ValueError:
                raise AwsError(400, "ValidationException", "Malformed input request") from None
            texts = _titan_text(body) if model.startswith("amazon.") else _cohere_texts(body)
        except AwsError as exc:
            if exc.status == 400:
                self.refused.append((body, exc.message))
            return aws_error(exc.status, exc.kind, exc.message)
        self.paths.append(request.raw_path)
        self.embedded.append(texts)
        reply = self.script.pop(0) if self.script else None
        if reply is not None and reply.status != 200:
            return aws_error(reply.status, reply.error_type, reply.error_message, reply.headers)
        if model.startswith("amazon."):
            vector = embedding_of(texts[0], body.get("dimensions", 1024))
            tokens = _tokens(texts[0])
            return web.json_response(
                {
                    "embedding": vector,
                    "embeddingsByType": {"float": vector},
                    "inputTextTokenCount": tokens,
                }
            )
        vectors = [embedding_of(t, COHERE_DIMENSIONS) for t in texts]
        return web.json_response(
            {
                "embeddings": vectors,
                "id": str(uuid.uuid4()),
                "response_type": "embeddings_floats",
                "texts": texts,
            }
        )


def _malformed(where: str, problem: str) -> AwsError:
    """Bedrock's wording of a body its model's JSON schema refuses."""
    message = (
        f"Malformed input request: {where}: {problem}, please reformat your input and try again."
    )
    return AwsError(400, "ValidationException", message)


def _known_keys(body: Any, required: str, known: set[str]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _malformed("#", f"expected type: JSONObject, found: {type(body).__name__}")
    for key in body:
        if key not in known:
            raise _malformed("#", f"extraneous key [{key}] is not permitted")
    if required not in body:
        raise _malformed("#", f"required key [{required}] not found")
    return body


def _titan_text(body: Any) -> list[str]:
    body = _known_keys(body, "inputText", TITAN_KEYS)
    text = body["inputText"]
    if not isinstance(text, str):
        raise _malformed("#/inputText", f"expected type: String, found: {type(text).__name__}")
    if not text:
        raise _malformed("#/inputText", "expected minLength: 1, actual: 0")
    if len(text) > TITAN_MAX_CHARS:
        raise _malformed(
            "#/inputText", f"expected maxLength: {TITAN_MAX_CHARS}, actual: {len(text)}"
        )
    if body.get("dimensions", 1024) not in TITAN_DIMENSIONS:
        raise _malformed("#/dimensions", f"{body['dimensions']} is not a valid enum value")
    if not isinstance(body.get("normalize", True), bool):
        raise _malformed("#/normalize", "expected type: Boolean")
    if _tokens(text) > TITAN_MAX_TOKENS:
        raise AwsError(
            400,
            "ValidationException",
            f"400 Bad Request: Too many input tokens. Max input tokens: {TITAN_MAX_TOKENS}, "
            f"request input token count: {_tokens(text)} ",
        )
    return [text]


def _cohere_texts(body: Any) -> list[str]:
    body = _known_keys(body, "texts", COHERE_KEYS)
    if "input_type" not in body:
        raise _malformed("#", "required key [input_type] not found")
    texts = body["texts"]
    if not isinstance(texts, list):
        raise _malformed("#/texts", "expected type: JSONArray")
    if len(texts) > COHERE_MAX_TEXTS:
        raise _malformed("#/texts", f"expected maxItems: {COHERE_MAX_TEXTS}, actual: {len(texts)}")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise _malformed(f"#/texts/{index}", "expected type: String")
        if len(text) > COHERE_MAX_CHARS:
            raise _malformed(
                f"#/texts/{index}", f"expected maxLength: {COHERE_MAX_CHARS}, actual: {len(text)}"
            )
    if body["input_type"] not in COHERE_INPUT_TYPES:
        raise _malformed("#/input_type", f"{body['input_type']} is not a valid enum value")
    if body.get("truncate", "NONE") not in COHERE_TRUNCATE:
        raise _malformed("#/truncate", f"{body['truncate']} is not a valid enum value")
    return texts


def _tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


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
