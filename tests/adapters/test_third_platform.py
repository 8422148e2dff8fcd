"""A third platform, whole in one folder (`tests/adapters/toy_platform/`) and registered with
one line: its config section, door, bots, probe and `init` questions, and nothing outside its
folder names it (issues 30 and 39). It is served end to end, as Slack and Telegram are: a
request checked at its door and stored before it is answered, handed on by the one replayer to
its bot, trust and sessions from its profile and its section, the agent's answer sent through
its transport in its own markup. `check-config` validates and probes its section, `init`
asks its questions and writes it, and the console's settings page shows its fields and
applies them."""

from __future__ import annotations

import argparse
import io
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

from adapters import platforms
from adapters.admin.config_form import read_edit, version
from adapters.server.app import App
from adapters.server.init_config import Answers
from adapters.server.init_interview import Interview
from config import load
from runtime.messages import MessageKind
from tests.adapters.cli_process import python_module
from tests.adapters.toy_platform.bots import ToyBot
from tests.adapters.toy_platform.plugin import TOY_PLATFORM
from tests.adapters.toy_platform.probe import GOOD
from tests.adapters.toy_platform.settings import TOY_SECTION
from tests.admin.forms import form_fields
from tests.admin.harness import GLOBAL_TOKEN, AdminClient
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.runtime.helpers import until
from tests.topology import drained

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("runtime", "bridge", "adapters", "config")


def toml(db: Path, provider: str, token: str = "${TOY_TOKEN}", more: str = "") -> str:
    """`more`: tables before the workspace's (`[admin]`)."""
    return f"""
[storage]
path = "{db}"

[provider]
{provider}
{more}

[[workspaces]]
id = "acme"
default_agent = "helper"

  [workspaces.toy]
  token = "{token}"
  rooms = ["#ops"]

  [[workspaces.operators]]
  id = "alice"
  primary = true
  toy_user_id = "alice"

  [[workspaces.agents]]
  id = "helper"
"""


def toy_cli(*args: str | Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`switchboard` with the toy registered (`toy_platform/__main__.py`)."""
    done = python_module(
        "tests.adapters.toy_platform",
        *args,
        env={"PATH": "/usr/bin:/bin", "HOME": str(ROOT), **(env or {})},
    )
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
def toy() -> Iterator[None]:
    platforms.register(TOY_PLATFORM)
    yield
    platforms.forget("toy")


@pytest.fixture
async def app(
    toy: None, tmp_path: Path, anthropic_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[App]:
    monkeypatch.setenv("TOY_TOKEN", GOOD)
    path = tmp_path / "switchboard.toml"
    kind = f'kind = "anthropic"\nbase_url = "{anthropic_api.url}"\napi_key = "sk-ant-test"'
    admin = f'[admin]\ntoken = "{GLOBAL_TOKEN}"'
    path.write_text(toml(tmp_path / "sb.db", kind, more=admin))
    app = App(load(path), stdin=io.StringIO(), stdout=io.StringIO(), path=path)
    await app.start()
    yield app
    await app.stop()


async def test_a_platform_in_one_folder_is_served_end_to_end(
    app: App, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("hello from the agent")]
    bot = app.live.bots("toy")["acme"]
    assert isinstance(bot, ToyBot)
    url = f"http://127.0.0.1:{app.port}/toy/acme"
    hi = {"n": 1, "from": "@alice", "where": "@alice", "text": "hi"}
    async with aiohttp.ClientSession() as http:
        async with http.post(url, json=hi, headers={"X-Toy-Token": "guess"}) as answer:
            assert answer.status == 403, "its door checks before anything is stored"
        for _ in range(2):  # the platform's retry is taken once
            async with http.post(url, json=hi, headers={"X-Toy-Token": GOOD}) as answer:
                assert answer.status == 200 and await answer.text() == "stored"
        stranger = {"n": 2, "from": "@mallory", "where": "@mallory", "text": "let me in"}
        async with http.post(url, json=stranger, headers={"X-Toy-Token": GOOD}) as answer:
            assert answer.status == 200
    await until(lambda: any(s.route.conversation_id == "@alice" for s in bot.transport.sent))
    await drained(app)
    await app.bridge.settle()
    to_alice = [s.text for s in bot.transport.sent if s.route.conversation_id == "@alice"]
    assert to_alice == ["HELLO FROM THE AGENT"], "its markup, through its transport"
    to_mallory = [s.text for s in bot.transport.sent if s.route.conversation_id == "@mallory"]
    assert len(to_mallory) == 1 and "not an operator" in to_mallory[0].lower()
    prompts = [
        m.message.text
        for m in await app.runtime.store.messages()
        if m.message.kind is MessageKind.OPERATOR_PROMPT
    ]
    assert prompts == ["hi"]
    # The console's settings form edits its rooms, and its operators' ids.
    acme = app.config.workspaces[0]
    form = {"version": version(acme), "queue_mode": "steer", "op-0-id": "alice"}
    form |= {"primary": "0", "op-0-toy_user_id": "alice", "toy_rooms": "#ops, #dev"}
    edit = read_edit(form, acme)
    assert edit.allowed == {"toy": ("#ops", "#dev")}
    assert edit.operators is not None and edit.operators[0].users == {"toy_user_id": "alice"}


async def test_the_console_shows_its_fields_and_applies_them(app: App) -> None:
    """Its section, its operators' ids and its allow list on the settings page, from what it
    registered (no template names a platform), and the page's form applied as it came."""
    page_path = "/admin/w/acme/config"
    async with AdminClient(app) as admin:
        await admin.login(GLOBAL_TOKEN)
        status, page = await admin.get(page_path)
        assert status == 200
        fields = form_fields(page, page_path)
        assert fields["op-0-toy_user_id"] == "alice" and fields["toy_rooms"] == "#ops"
        assert "op-new-toy_user_id" in fields
        assert "<th>Toy user id</th>" in page and "Allowed Toy rooms (comma-separated)" in page
        assert "<dt>Toy token</dt>" in page and GOOD not in page
        assert "Not connected to Telegram or Slack" in page
        fields |= {"toy_rooms": "#ops, #dev", "op-0-toy_user_id": "alicia"}
        status, page = await admin.post(page_path, fields, csrf=False)
        assert status == 200 and "workspaces changed: acme" in page, page
        _, home = await admin.get("/admin/")
    acme = app.config.workspaces[0]
    toy = TOY_SECTION.of(acme)
    assert toy is not None and toy.rooms == ["#ops", "#dev"]
    assert TOY_SECTION.user(acme.operators[0]) == "alicia"
    assert re.search(r'<span class="surfaces">toy</span>', home)


def test_no_console_template_names_a_platform() -> None:
    templates = ROOT / "adapters" / "admin" / "templates"
    named = [
        f"{path.name}:{n}"
        for path in sorted(templates.glob("*.html"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\b(slack|telegram)\b", line, re.IGNORECASE)
    ]
    assert named == []


def test_check_config_validates_and_probes_its_section(tmp_path: Path) -> None:
    path = tmp_path / "toy.toml"
    path.write_text(toml(tmp_path / "sb.db", 'kind = "offline"'))
    status, out = toy_cli("check-config", "--config", path, "--probe", env={"TOY_TOKEN": GOOD})
    assert status == 0, out
    assert "workspace acme: toy; queue mode steer" in out and "toy rooms: #ops" in out
    assert "ok    workspace acme: toy.token: the toy bot" in out
    status, out = toy_cli("check-config", "--config", path, "--probe", env={"TOY_TOKEN": "x"})
    assert status == 1 and "FAIL  workspace acme: toy.token: the toy does not know" in out, out
    path.write_text(toml(tmp_path / "sb.db", 'kind = "offline"').replace("rooms", "roms"))
    status, out = toy_cli("check-config", "--config", path, env={"TOY_TOKEN": GOOD})
    assert status == 2 and "workspaces[0].toy.roms" in out and "unknown key" in out, out


def test_init_asks_its_questions_and_writes_its_section(tmp_path: Path) -> None:
    config = tmp_path / "bot.toml"
    args = ["init", "--non-interactive", "--config", config, "--platform", "toy", "--offline"]
    status, out = toy_cli(*args, "--toy-token", "xoxb-1-2", "--operator-toy-id", "alice")
    assert status == 2 and "--toy-token: that is a Slack bot token, not a toy token" in out, out
    status, out = toy_cli(*args, "--toy-token", "toy-bad", "--operator-toy-id", "alice")
    assert status == 2 and "Toy token: the toy does not know this token" in out, out
    status, out = toy_cli(*args, "--toy-token", GOOD, "--operator-toy-id", "alice")
    assert status == 0 and "ok: the toy bot" in out, out
    written = config.read_text()
    assert "[workspaces.toy]" in written and 'toy_user_id = "alice"' in written
    assert (
        GOOD not in written
        and f"SWITCHBOARD_TOY_TOKEN={GOOD}" in (tmp_path / "bot.env").read_text()
    )
    status, out = toy_cli("check-config", "--config", config, "--probe")
    assert status == 0 and "ok    workspace main: toy.token: the toy bot" in out, out


def test_init_on_a_terminal_asks_for_it(toy: None, monkeypatch: pytest.MonkeyPatch) -> None:
    said = iter(["toy", "alice"])
    hidden = iter(["toy-bad", GOOD])
    monkeypatch.setattr("builtins.input", lambda prompt: print(prompt) or next(said))
    monkeypatch.setattr("getpass.getpass", lambda prompt: print(prompt) or next(hidden))
    flags = argparse.Namespace(platform=None, offline=True, no_probe=False)
    flags.toy_token = flags.operator_toy_id = None
    answers = Answers({"toy": TOY_PLATFORM.setup.setup(flags)})
    Interview(flags, answers, probing=True).run()
    assert answers.platforms == ["toy"] and answers.operator_lines() == ['  toy_user_id = "alice"']
    assert answers.chosen()[0].secrets() == {"SWITCHBOARD_TOY_TOKEN": GOOD}


def test_no_product_file_names_it() -> None:
    """A platform is its folder and one registration line: no other file changes for it."""
    named = [
        f"{path.relative_to(ROOT)}:{n}"
        for package in PRODUCT
        for path in sorted((ROOT / package).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\btoy\b", line, re.IGNORECASE)
    ]
    assert named == []
