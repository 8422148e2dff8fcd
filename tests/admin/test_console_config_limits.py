"""What a workspace's admin is refused in the console, over real HTTP against the running App
on each topology that serves it: a schedule under the server's floor of `every` (the server's
`[server] schedule_min_every`, 60 s here as by default), a prompt of megabytes or with a raw
control character. Each refusal says what is wrong in the admin's words, on the field it is
about (marked invalid, its message tied to it), not as the config file's key path, line or
problem count; and no refusal names where the server keeps its config file (its folder), on
the Schedules tab or the Settings tab: a file changed behind the page is named by its name."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from tests.admin.forms import form_fields
from tests.admin.harness import ACME_TOKEN, AdminClient, start_console
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology

SCHEDULES = "/admin/w/acme/schedules"
SETTINGS = "/admin/w/acme/config"


@pytest.fixture
async def app(
    console_topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[App]:
    anthropic_api.responder = lambda body: text("Checked.")
    app = await start_console(
        db_path, anthropic_api, telegram_api, slack_api, topology=console_topology
    )
    yield app
    await console_topology.stop()  # while the fakes still answer


def folders(path: Path) -> list[str]:
    """Where the file is, as the server was given it and absolute."""
    return [str(path.parent), str(path.parent.resolve())]


def refusal(page: str) -> str:
    """The words of the page's refusal (its alert), as the admin reads them."""
    [said] = re.findall(r'<div class="error" role="alert">(.*?)</div>', page, re.S)
    return re.sub(r"<[^>]+>", " ", said).replace("&#39;", "'")


def marked(page: str) -> list[str]:
    """The form's fields marked invalid, each with the message tied to it."""
    return [
        name
        for name in re.findall(r'name="([\w-]+)"[^>]*aria-invalid="true"', page)
        if f'id="error-{name}"' in page
    ]


def config_words(said: str) -> list[str]:
    """What of the config file's own report a refusal shows: key paths, lines, a count."""
    return re.findall(r"workspaces\[\d+\]|\(top level\)|\(line \d+\)|problem\(s\)", said)


async def test_a_schedule_under_the_floor_or_too_long_or_with_control_characters_is_refused(
    app: App,
) -> None:
    assert app.path is not None
    before_file, before_config = app.path.read_text(), app.config
    async with AdminClient(app) as admin:
        await admin.login(ACME_TOKEN)
        _, html = await admin.get(SCHEDULES + "/add")
        form = {**form_fields(html, SCHEDULES), "id": "fast", "prompt": "Check the queue."}
        for change, field, words in (
            ({"every": "1s"}, "every", "Every: every = '1s' is under this server's floor of 60s"),
            ({"every": "59s"}, "every", "schedule_min_every under [server]"),
            (
                {"every": "1h", "prompt": "x" * 9_000},
                "prompt",
                "prompt is 9,000 characters long; at most",
            ),
            (
                {"every": "1h", "prompt": "Hi\x1b[2J"},
                "prompt",
                "prompt holds a control character (U+001B",
            ),
            (
                {"every": "1h", "prompt": "Hi\u202eevil"},
                "prompt",
                "prompt holds a control character (U+202E",
            ),
        ):
            status, html = await admin.post(SCHEDULES, {**form, **change})
            assert status == 400, change
            said = refusal(html)
            assert words in said, (change, said)
            assert marked(html) == [field], (change, "the field it is about is marked")
            assert config_words(said) == [], (change, said)
            assert not any(folder in html for folder in folders(app.path)), "not where it is"
        status, html = await admin.post(SCHEDULES, {**form, "every": "60s"})
        assert status == 200, "the floor itself is allowed"
    [acme] = [w for w in app.config.workspaces if w.id == "acme"]
    assert [s.every for s in acme.schedules] == ["60s"]
    assert before_config is not app.config and before_file != app.path.read_text()


async def test_a_refused_settings_edit_says_why_in_words_and_never_names_the_folder(
    app: App,
) -> None:
    assert app.path is not None
    async with AdminClient(app) as admin:
        await admin.login(ACME_TOKEN)
        _, page = await admin.get(SETTINGS)
        fields = form_fields(page, SETTINGS)
        del fields["primary"]  # no primary operator left: the loader refuses it
        status, page = await admin.post(SETTINGS, fields, csrf=False)
        assert status == 400
        said = refusal(page)
        assert "exactly one operator must have primary = true (found 0)" in said
        assert config_words(said) == [], said
        assert not any(folder in page for folder in folders(app.path)), page[-2000:]

        app.path.write_text(app.path.read_text() + '\n[logging]\nlevel = "debug"\n')
        _, page = await admin.get(SETTINGS)
        fields = form_fields(page, SETTINGS)
        fields["queue_mode"] = "followup"
        status, page = await admin.post(SETTINGS, fields, csrf=False)
        assert status == 400 and "switchboard.toml has changes not yet applied" in page, page
        assert not any(folder in page for folder in folders(app.path))
