"""The runs page's figures and the edit of a paused tool call, in Debian's Chromium."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.ui import ui_targets
from tests.ui.test_ui_browser import TIMEOUT, open_page


def test_the_runs_page_shows_started_duration_model_calls_and_tokens(browser, served):
    page, urls = open_page(browser, served)
    pay = page.locator('tr[data-thread="pay-1"]')
    expect(pay.locator(".model-calls")).to_have_text("1", timeout=TIMEOUT)
    expect(pay.locator(".tokens")).to_have_text("10")
    expect(pay.locator(".started")).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$"))
    expect(pay.locator(".duration")).to_have_text(re.compile(r"^\d+\.\d\d s$"))
    pipe = page.locator('tr[data-thread="pipe-1"]')
    expect(pipe.locator(".model-calls")).to_have_text("0")
    expect(pipe.locator(".tokens")).to_have_text("–")  # no model reported any
    headers = page.locator("#runs th").all_text_contents()
    assert headers[4:] == ["started", "duration", "model calls", "tokens"]
    page.close()
    assert all(u.startswith(served.url + "/") for u in urls), urls


def test_a_paused_call_is_edited_from_the_page_and_runs_once_with_the_edit(browser, served):
    page, urls = open_page(browser, served, "/runs/pay-1")
    box = page.locator(".approval")
    expect(box).to_contain_text('payer wants to call pay({"amount":5})', timeout=TIMEOUT)
    expect(box.locator(".edit-args")).to_be_hidden()
    box.locator("button.edit").click()
    args = box.locator(".edit-args")
    expect(args).to_have_value('{\n  "amount": 5\n}')
    args.fill("[9]")  # not an object: refused on the page, nothing sent
    box.locator("button.edit-run").click()
    expect(box.locator(".edit-error")).to_have_text("the arguments must be a JSON object")
    args.fill('{"amount": 9}')
    box.locator("button.edit-run").click()
    expect(page.locator("#status")).to_have_text("done", timeout=TIMEOUT)
    expect(page.locator(".approval")).to_have_count(0)
    page.click('tr[data-agent="payer"]')
    expect(page.locator("#agent-detail")).to_contain_text("done: paid 9", timeout=TIMEOUT)
    expect(page.locator("#agent-detail")).to_contain_text('→ pay({"amount":5})')  # as asked
    assert ui_targets.PAID == [9]  # the tool ran once, with the edited argument
    page.close()
    assert all(u.startswith(served.url + "/") for u in urls), urls
