"""`POST /hooks/{workspace}/{trigger}` over real HTTP, on every topology that serves the public
port (the door process, inline, a standby replica), as a sender meets it: GitHub's signed
`workflow_run` delivery is taken (202) and stored once (its retry: 200, a duplicate); a request
with no delivery id is taken once per body; a forged, missing, `sha1=` or other body's signature,
a trigger that does not exist or is disabled, an oversized body are refused with their status,
and none of them is stored. The intake is read while its requests wait for a decoder that is
not ready, so what was stored stays there to be seen."""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from adapters.intake.record import NotReady
from adapters.server.app import App
from bridge.store import StoredRequest
from tests.adapters.hooks import payloads
from tests.adapters.hostile.send import intake_fails, server_errors
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic
from tests.topology import Topology

CI_SECRET = "ci-webhook-secret-0123456789"
DEPLOY_SECRET = "deploy-hmac-secret-0123456789"
DELIVERY = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
MAX_BODY = 64 * 1024
GITHUB = {"X-GitHub-Event": "workflow_run", "Content-Type": "application/json"}


class NotYet:
    """The hooks' decoder, never ready: what the door stored waits in the intake."""

    async def decode(self, request: StoredRequest) -> None:
        raise NotReady("the test reads the intake instead")


def trigger(id: str, kind: str, secret: str, **more: Any) -> dict[str, Any]:
    fields = {"id": id, "agent": "assistant", "kind": kind, "secret": secret}
    return {**fields, "prompt": f"A {id} event arrived.", **more}


@pytest.fixture
async def app(topology: Topology, anthropic_api: FakeAnthropic) -> AsyncIterator[App]:
    acme = workspace("acme", [{"id": "alice", "primary": True}], console="alice")
    triggers = [
        trigger("ci", "github", CI_SECRET, max_body_bytes=MAX_BODY),
        trigger("deploy", "hmac", DEPLOY_SECRET),
        trigger("off", "github", CI_SECRET, enabled=False),
    ]
    path = write_config(
        topology.folder / "switchboard.toml",
        db=topology.db,
        workspaces=[{**acme, "triggers": triggers}],
        provider=anthropic(anthropic_api.url),
    )
    app = await topology.start(path)
    topology.active.live.decoders["hooks"] = NotYet()
    yield app


def sign(body: bytes, secret: str = CI_SECRET, scheme: str = "sha256") -> str:
    return f"{scheme}={hmac.new(secret.encode(), body, scheme).hexdigest()}"


async def post(
    http: aiohttp.ClientSession, app: App, path: str, body: Any, headers: dict[str, str]
) -> tuple[int, dict[str, Any]]:
    url = f"http://127.0.0.1:{app.port}/hooks/{path}"
    async with http.post(url, data=body, headers=headers) as answer:
        return answer.status, await answer.json()


async def test_signed_deliveries_are_stored_once_and_nothing_else_is(
    app: App, topology: Topology, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO)
    body = payloads.body()
    good = {**GITHUB, "X-GitHub-Delivery": DELIVERY, "X-Hub-Signature-256": sign(body)}
    async with aiohttp.ClientSession() as http:

        async def refused(path: str, data: Any, headers: dict[str, str]) -> tuple[int, str]:
            status, answer = await post(http, app, path, data, headers)
            assert answer["ok"] is False, answer
            return status, answer["error"]

        forged = sign(body, "not-the-ci-secret-0123456789")
        assert await refused("acme/ci", body, {**good, "X-Hub-Signature-256": forged}) == (
            401,
            "X-Hub-Signature-256 does not sign this body; expected X-Hub-Signature-256: "
            "sha256=<hex HMAC-SHA256 of the body, keyed with the secret>",
        )
        missing = {k: v for k, v in good.items() if k != "X-Hub-Signature-256"}
        status, error = await refused("acme/ci", body, missing)
        assert status == 401 and error.startswith("X-Hub-Signature-256 is missing"), error
        other_body = {**good, "X-Hub-Signature-256": sign(b'{"action": "requested"}')}
        assert (await refused("acme/ci", body, other_body))[0] == 401
        sha1 = {**good, "X-Hub-Signature-256": sign(body, scheme="sha1")}
        assert (await refused("acme/ci", body, sha1))[0] == 401
        github_on_hmac = {**good, "X-Hub-Signature-256": sign(body, DEPLOY_SECRET)}
        assert (await refused("acme/deploy", body, github_on_hmac))[0] == 401, "X-Signature"
        nowhere = [await refused(p, body, good) for p in ("acme/cd", "globex/ci", "acme/off")]
        assert nowhere == [(404, "no such trigger")] * 3, "a prober learns nothing"
        big = b" " * (MAX_BODY + 1)
        status, error = await refused("acme/ci", big, missing)  # before the signature is
        assert status == 413 and f"max_body_bytes ({MAX_BODY})" in error

        async def streamed() -> AsyncIterator[bytes]:  # chunked: no length declared
            for _ in range(3):
                yield b" " * MAX_BODY

        assert (await refused("acme/ci", streamed(), good))[0] == 413
        latin = '{"text": "caf\u00e9"}'.encode("latin-1")
        latin_signed = {**good, "X-Hub-Signature-256": sign(latin)}
        assert await refused("acme/ci", latin, latin_signed) == (400, "the body is not UTF-8 text")
        if topology.kind != "process":  # where this process stores: an intake that fails
            with monkeypatch.context() as patch:
                intake_fails(patch)
                async with http.post(
                    f"http://127.0.0.1:{app.port}/hooks/acme/ci", data=body, headers=good
                ) as answer:
                    assert answer.status == 500, "not stored: GitHub sends it again"
        assert await app.way_in.intake.pending(0, 10) == [], "nothing refused was stored"

        spoofed = {**good, "X-Switchboard-Trigger": "deploy"}
        assert await post(http, app, "acme/ci", body, spoofed) == (202, {"ok": True})
        assert await post(http, app, "acme/ci", body, good) == (
            200,
            {"ok": True, "duplicate": True},
        ), "GitHub's redelivery of the same delivery"
        event = json.dumps({"service": "api", "version": "1.4.2", "state": "failed"}).encode()
        no_delivery_id = {
            "Content-Type": "application/json",
            "X-Signature": sign(event, DEPLOY_SECRET),
        }
        assert await post(http, app, "acme/deploy", event, no_delivery_id) == (202, {"ok": True})
        assert (await post(http, app, "acme/deploy", event, no_delivery_id))[1]["duplicate"]

    stored = await app.way_in.intake.pending(0, 10)
    assert [(r.platform, r.workspace_id, r.place, r.verified) for r in stored] == [
        ("hooks", "acme", "hook:ci", "github signature"),
        ("hooks", "acme", "hook:deploy", "hmac signature"),
    ]
    ci, deploy = stored
    assert json.loads(ci.body) == payloads.workflow_run_failed()
    assert ci.headers == {
        "X-GitHub-Event": "workflow_run",
        "X-GitHub-Delivery": DELIVERY,
        "Content-Type": "application/json",
        "X-Switchboard-Trigger": "ci",
    }, "only what the agent may see, and the trigger named by the door, not the client"
    assert deploy.body == event.decode()
    assert deploy.headers == {"Content-Type": "application/json", "X-Switchboard-Trigger": "deploy"}
    logged = "\n".join(str(r.__dict__) for r in caplog.records)
    for secret in (CI_SECRET, DEPLOY_SECRET, sign(body).removeprefix("sha256="), forged[7:]):
        assert secret not in logged, "a secret or a signature was logged"
    assert "hook refused" in logged
    assert server_errors([r for r in caplog.records if "not stored" not in r.getMessage()]) == []
