"""Live pages a keyboard or screen-reader user can work in while turns run, in a real browser:
a focused link on a live board stays the focused element as the board updates each second;
the page's live region says when a turn starts and how it ended; a session's page shows a
new turn as it comes, each turn's own status, how an ended turn ended (the words a reload
shows), and its Stop button keeps its place and the focus when the turn ends."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from playwright.async_api import Locator, Page, expect

from adapters.server.app import App
from tests.adapters.telegram_harness import ALICE
from tests.admin.browser.chromium import LOOP
from tests.admin.browser.walk import GATED, Console
from tests.admin.harness import ACME_TOKEN, GLOBAL_TOKEN
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

pytestmark = LOOP

OPERATOR = int(ALICE["telegram_user_id"])
DM = f"Telegram, DM with user{OPERATOR}"  # alice's DM, as the pages name it
DONE = "The checks passed."
RUNNING = re.compile(rf"^running tool {GATED} for \d+ s$")
ANSWERED = re.compile(r"^answered in \d+(\.\d)? s$")  # a turn's outcome, as its page says it
KEPT_MS = 5_000  # how long a focused element must stay focused while the page updates

# Focus the element, mark it, and watch from then on: the first moment the focused element
# is not the marked one, and how many times the live part (`part`) changed.
WATCH = """(el, part) => {
  el.focus();
  el.keptFocus = true;
  window.watch = {since: performance.now(), lost: null, updates: 0};
  new MutationObserver(() => { window.watch.updates += 1; }).observe(
    document.getElementById(part),
    {subtree: true, childList: true, characterData: true, attributes: true});
  setInterval(() => {
    const now = document.activeElement;
    if (window.watch.lost === null && !(now && now.keptFocus === true)) {
      const after = Math.round(performance.now() - window.watch.since);
      window.watch.lost = `the focus went to ${now ? now.tagName : "nothing"} after ${after} ms`;
    }
  }, 20);
}"""


async def watch_focus(element: Locator, part: str) -> None:
    await element.evaluate(WATCH, part)


async def focus_kept(page: Page, *, for_ms: int = 0, updates: int = 0) -> None:
    """The watched element has had the focus all along (for `for_ms` at least, while the
    live part changed `updates` times at least), and has it now."""
    if for_ms:
        await page.wait_for_function(
            f"() => performance.now() - window.watch.since >= {for_ms}", polling=100
        )
    watch = await page.evaluate("window.watch")
    assert watch["lost"] is None, watch["lost"]
    assert await page.evaluate("document.activeElement.keptFocus === true")
    assert watch["updates"] >= updates, f"the page changed {watch['updates']} times only"


async def running_gated_turn(anthropic_api: FakeAnthropic, telegram_api: FakeTelegram) -> None:
    """Alice asks; the turn runs the gated tool until the gate file exists."""
    anthropic_api.script = [tools((GATED, {})), text(DONE)]
    telegram_api.push_message("run the checks", user=OPERATOR)
    await until(lambda: len(anthropic_api.requests) == 1)


@pytest.mark.parametrize("path", ["/", "/w/acme/"], ids=["global-board", "overview"])
async def test_a_focused_link_on_a_live_board_keeps_the_focus_while_a_turn_runs(
    path: str,
    console: Console,
    page: Page,
    app: App,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    await running_gated_turn(anthropic_api, telegram_api)
    await console.log_in(GLOBAL_TOKEN)
    await console.open(path)
    running = page.locator('#board section[data-workspace="acme"] .running li')
    await expect(running.locator('[data-field="doing"]')).to_have_text(RUNNING)
    link = running.get_by_role("link", name=DM)
    before = await running.locator('[data-field="doing"]').inner_text()
    await watch_focus(link, "board")
    # the board ticks each second while the tool runs ("... for 3 s"): 5 s of it
    await focus_kept(page, for_ms=KEPT_MS, updates=3)
    assert await running.locator('[data-field="doing"]').inner_text() != before, "it updated"
    await page.keyboard.press("Enter")  # and the focused link still works
    await expect(page.locator("h1")).to_have_text(f"{DM} \u00b7 assistant")


async def test_the_live_region_says_when_a_turn_starts_and_how_it_ended(
    console: Console,
    page: Page,
    app: App,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    gate: Path,
) -> None:
    await console.log_in(ACME_TOKEN)
    await console.open("/w/acme/")
    region = page.locator("#announce")
    await expect(region).to_have_attribute("aria-live", "polite")
    await page.evaluate("window.stillThisPage = true")
    await running_gated_turn(anthropic_api, telegram_api)
    await expect(region).to_have_text(f"{DM}: turn started")
    await asyncio.to_thread(gate.touch)
    ended = region.locator("p").nth(1)
    await expect(ended).to_have_text(re.compile(rf"^{DM}: turn ended: answered in \d+(\.\d)? s$"))
    await expect(region.locator("p")).to_have_count(2)  # the ticks in between said nothing
    assert await page.evaluate("window.stillThisPage === true"), "said live, not on a reload"


async def test_the_session_page_follows_its_turns_and_stop_keeps_the_focus(
    console: Console,
    page: Page,
    app: App,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    gate: Path,
) -> None:
    anthropic_api.script = [text("Hello.")]
    telegram_api.push_message("hello", user=OPERATOR)
    await until(lambda: "Hello." in telegram_api.chat(OPERATOR))
    [session] = [
        s.id for s in app.runtime.sessions.values() if s.record.agent_id == "acme/assistant"
    ]
    await console.log_in(ACME_TOKEN)
    await console.open(f"/w/acme/sessions/{session}")
    turns = page.locator("#turns > li.turn")
    await expect(turns).to_have_count(1)
    await page.evaluate("window.stillThisPage = true")

    await running_gated_turn(anthropic_api, telegram_api)
    await expect(turns).to_have_count(2)  # the new turn came in at the top
    newest = turns.first
    await expect(newest.locator('[data-role="operator"] .text')).to_have_text("run the checks")
    await expect(newest).to_have_attribute("data-status", "running")
    await expect(newest.locator(".turn-head .outcome")).to_have_text(RUNNING)
    await expect(turns.nth(1).locator(".turn-head .outcome")).to_have_text(ANSWERED)
    await expect(page.locator("#announce")).to_have_text(f"{DM}: turn started")

    stop = page.get_by_role("button", name="Stop")
    await expect(stop).not_to_have_attribute("aria-disabled", "true")
    await watch_focus(stop, "session")
    await asyncio.to_thread(gate.touch)
    await expect(newest).to_have_attribute("data-status", "completed")
    outcome = newest.locator(".turn-head .outcome")
    await expect(outcome).to_have_text(ANSWERED)  # how it ended, live
    await expect(newest.locator("li.call .outcome")).to_have_text("ok")
    await expect(stop).to_have_attribute("aria-disabled", "true")
    await expect(stop).to_have_accessible_description("Nothing runs now.")
    await focus_kept(page)  # Stop kept its place, and the focus, as its turn ended
    await expect(page.locator("#announce p").nth(1)).to_have_text(
        re.compile(rf"^{DM}: turn ended: answered in \d+(\.\d)? s$")
    )
    await page.keyboard.press("Enter")  # nothing to stop: said, and the page stays
    await expect(page.locator("#announce p").last).to_have_text(
        "Nothing runs now: there is no turn to stop."
    )
    assert await page.evaluate("window.stillThisPage === true"), "all of it live, no reload"

    said = await outcome.inner_text()
    await page.reload()
    await expect(outcome).to_have_text(said)  # the same words as after a reload
