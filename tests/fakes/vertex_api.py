"""A loopback fake of Claude on Google Vertex AI, as the `anthropic` SDK's Vertex client
calls it.

`POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict`
answers the Messages API's JSON, `...:streamRawPredict` its server-sent events, exactly as
Anthropic's API does. A request must carry `Authorization: Bearer` with the fake's access
token and name its project and region. The body is the Messages API's without `model` (it is
in the path) and with `anthropic_version` `vertex-2023-10-16`; its messages obey the
Anthropic API's rules (anthropic_rules.py), refused with the same 400. Tokens are counted and
cached as the Anthropic fake does.

Errors come in two shapes, as on Vertex: what Google's front answers (`error(429,
"RESOURCE_EXHAUSTED", ...)`, `PERMISSION_DENIED`, `UNAVAILABLE`: `{"error": {"code",
"message", "status"}}`) and what the model answers, passed on in Anthropic's shape
(`error(529, "overloaded_error", ...)`). Replies are scripted as for the Anthropic fake.

Google's embedding models answer `POST .../publishers/google/models/{model}:predict`, with the
same token, project and region: `{"instances": [{"content", "task_type", "title"}],
"parameters": {"outputDimensionality", "autoTruncate"}}`, at most 250 instances (one for
`gemini-embedding-001`) and 20,000 input tokens a request, an input over 2,048 tokens truncated
and counted as that, an empty content refused, an unknown field refused as Google's JSON
parser refuses it. Vectors are deterministic (`embedding_of`); `embedded` holds each request's
texts; a scripted error is answered too.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from aiohttp import web

from tests.fakes.anthropic_api import MAX_REQUEST_BYTES, FakeAnthropic
from tests.fakes.anthropic_rules import InvalidRequest
from tests.fakes.openai_api import embedding_of

ACCESS_TOKEN = "ya29.fake-vertex-access-token"  # a test value: google-auth never refreshes it
PROJECT = "switchboard-test"
REGION = "us-east5"
VERSION = "vertex-2023-10-16"
PREDICT = "/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model_action}"
EMBED = "/v1/projects/{project}/locations/{region}/publishers/google/models/{model_action}"
# model -> (dimensions, instances a request)
EMBEDDING_MODELS = {
    "text-embedding-005": (768, 250),
    "text-embedding-004": (768, 250),
    "text-multilingual-embedding-002": (768, 250),
    "gemini-embedding-001": (3072, 1),
}
TASK_TYPES = {
    "RETRIEVAL_QUERY",
    "RETRIEVAL_DOCUMENT",
    "SEMANTIC_SIMILARITY",
    "CLASSIFICATION",
    "CLUSTERING",
    "QUESTION_ANSWERING",
    "FACT_VERIFICATION",
    "CODE_RETRIEVAL_QUERY",
}
TOKEN_BUDGET, INPUT_TOKENS, CHARS_PER_TOKEN = 20_000, 2_048, 4


class FakeVertex(FakeAnthropic):
    def __init__(
        self, project: str = PROJECT, region: str = REGION, context_window: int = 200_000
    ) -> None:
        super().__init__(context_window)
        self.project, self.region = project, region
        self.access_token = ACCESS_TOKEN
        self.paths: list[str] = []  # of each request answered, as sent (the model in it)
        self.embedded: list[list[str]] = []  # the texts of each embeddings request answered

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_post(PREDICT, self._predict)
        app.router.add_post(EMBED, self._embed)
        return app

    async def _predict(self, request: web.Request) -> web.StreamResponse:
        model, _, action = request.match_info["model_action"].rpartition(":")
        if action not in ("rawPredict", "streamRawPredict") or not model:
            return vertex_error(404, "NOT_FOUND", f"The method {action!r} is not found.")
        refused = self._refused(request)
        if refused is not None:
            return refused
        checked = await self._body(request, model)
        if isinstance(checked, web.Response):
            return checked
        sent, body = checked
        self.requests.append(sent)
        self.paths.append(request.raw_path)
        reply = self._next_reply(body)
        if reply.status != 200:
            return vertex_error(reply.status, reply.error_type, reply.error_message, reply.headers)
        message = self._message(body, reply, self.cache.use(model, body))
        self.usages.append(message["usage"])
        try:
            if action == "streamRawPredict" and body.get("stream"):
                return await self._stream(request, message, reply)
            if reply.hold:
                await reply.hold.wait()
            return web.json_response(message)
        except (asyncio.CancelledError, ConnectionResetError):
            self.disconnects += 1
            raise

    def _refused(self, request: web.Request) -> web.Response | None:
        """Google's answer to a request without this token, or for another project or
        region."""
        if request.headers.get("Authorization") != f"Bearer {self.access_token}":
            return vertex_error(
                401,
                "UNAUTHENTICATED",
                "Request had invalid authentication credentials. Expected OAuth 2 access "
                "token, login cookie or other valid authentication credential.",
            )
        where = request.match_info
        if where["project"] != self.project or where["region"] != self.region:
            resource = f"projects/{where['project']}/locations/{where['region']}"
            return vertex_error(
                403,
                "PERMISSION_DENIED",
                f"Permission 'aiplatform.endpoints.predict' denied on resource '{resource}' "
                "(or it may not exist).",
            )
        return None

    async def _body(
        self, request: web.Request, model: str
    ) -> tuple[dict[str, Any], dict[str, Any]] | web.Response:
        """The body as sent, and as the Messages API would take it (the model from the
        path); or the 400 the model answers instead."""
        try:
            body: dict[str, Any] = json.loads(await request.read())
        except ValueError:
            return vertex_error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        problem = ""
        if "model" in body:
            problem = "model: Extra inputs are not permitted"
        elif body.get("anthropic_version") != VERSION:
            problem = f"anthropic_version: Input should be '{VERSION}'"
        checked = {k: v for k, v in body.items() if k != "anthropic_version"} | {"model": model}
        if not problem:
            try:
                self._check(checked)
            except InvalidRequest as exc:
                problem = str(exc)
        if problem:
            self.refused.append((body, problem))
            return vertex_error(400, "invalid_request_error", problem)
        return body, checked

    async def _embed(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused is not None:
            return refused
        model, _, action = request.match_info["model_action"].rpartition(":")
        if action != "predict" or model not in EMBEDDING_MODELS:
            name = (
                f"projects/{self.project}/locations/{self.region}/publishers/google/models/{model}"
            )
            return vertex_error(404, "NOT_FOUND", f"Publisher Model `{name}` was not found.")
        try:
            body: Any = json.loads(await request.read())
        except ValueError:
            return vertex_error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        dimensions, most = EMBEDDING_MODELS[model]
        problem = _embedding_problem(body, most, dimensions)
        if problem:
            self.refused.append((body, problem))
            return vertex_error(400, "INVALID_ARGUMENT", problem)
        texts = [instance["content"] for instance in body["instances"]]
        self.paths.append(request.raw_path)
        self.embedded.append(texts)
        reply = self.script.pop(0) if self.script else None
        if reply is not None and reply.status != 200:
            return vertex_error(reply.status, reply.error_type, reply.error_message, reply.headers)
        size = body.get("parameters", {}).get("outputDimensionality", dimensions)
        predictions = [
            {
                "embeddings": {
                    "values": embedding_of(text, size),
                    "statistics": {
                        "truncated": _tokens(text) > INPUT_TOKENS,
                        "token_count": min(_tokens(text), INPUT_TOKENS),
                    },
                }
            }
            for text in texts
        ]
        billable = sum(len(text) for text in texts)
        return web.json_response(
            {"predictions": predictions, "metadata": {"billableCharacterCount": billable}}
        )


def _embedding_problem(body: Any, most: int, dimensions: int) -> str:
    """What Vertex refuses in an embeddings request, worded as it does; "" if nothing."""
    if not isinstance(body, dict):
        return "Invalid JSON payload received. Expected an object."
    for key in body:
        if key not in ("instances", "parameters"):
            return f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.'
    instances = body.get("instances")
    if not isinstance(instances, list) or not instances:
        return "Invalid argument: instances must be a non-empty list."
    if len(instances) > most:
        return f"Invalid argument: {len(instances)} instances, but the model supports up to {most}."
    for instance in instances:
        content = instance.get("content") if isinstance(instance, dict) else None
        if not isinstance(content, str):
            return "Invalid argument: each instance needs a string `content`."
        if not content:
            return "The text content is empty."
        task = instance.get("task_type", "RETRIEVAL_QUERY")
        if task not in TASK_TYPES:
            return f"Invalid argument: unknown task_type {task!r}."
        if "title" in instance and task != "RETRIEVAL_DOCUMENT":
            return "Invalid argument: title is only valid with task type RETRIEVAL_DOCUMENT."
    tokens = sum(min(_tokens(i["content"]), INPUT_TOKENS) for i in instances)
    if tokens > TOKEN_BUDGET:
        return (
            f"Unable to submit request because the input token count is {tokens} but the model "
            f"supports up to {TOKEN_BUDGET}. Reduce the input token count and try again."
        )
    parameters = body.get("parameters", {})
    size = (
        parameters.get("outputDimensionality", dimensions) if isinstance(parameters, dict) else None
    )
    if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= dimensions:
        return f"Invalid argument: outputDimensionality must be between 1 and {dimensions}."
    return ""


def _tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def vertex_error(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    """Google's error shape for a status name (`RESOURCE_EXHAUSTED`), Anthropic's for an
    error type the model answered (`overloaded_error`)."""
    if kind.isupper():
        body: dict[str, Any] = {"error": {"code": status, "message": message, "status": kind}}
    else:
        body = {"type": "error", "error": {"type": kind, "message": message}}
    return web.json_response(body, status=status, headers=headers or {})
