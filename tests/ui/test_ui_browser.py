"""The UI in Debian's Chromium (Playwright): list, live run, approval, fork, offline, escaping."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.ui import ui_targets

TIMEOUT = 60_000  # generous: only keeps a broken test from hanging


def open_page(browser, served, path="/"):
    page = browser.new_page()
    urls: list[str] = []
    page.route("**/*", lambda route: (urls.append(route.request.url), route.continue_()))
    page.goto(served.url + path)
    return page, urls


def test_runs_list_shows_the_seeded_runs(browser, served):
    page, urls = open_page(browser, served)
    rows = page.locator("tr.run-row")
    expect(rows).to_have_count(3, timeout=TIMEOUT)
    expect(page.locator('tr[data-thread="pay-1"] .status')).to_have_text("interrupted")
    expect(page.locator('tr[data-thread="pipe-1"] .status')).to_have_text("done")
    page.select_option("#filter-status", "interrupted")
    expect(rows).to_have_count(1, timeout=TIMEOUT)
    expect(rows).to_have_attribute("data-thread", "pay-1")
    page.select_option("#filter-status", "")
    page.fill("#filter-text", "evil")
    expect(rows).to_have_count(1, timeout=TIMEOUT)
    expect(rows).to_have_attribute("data-thread", "evil-1")
    page.close()
    assert urls and all(u.startswith(served.url + "/") for u in urls), urls


def test_a_run_started_from_the_page_turns_from_running_to_done_live(browser, served):
    page, urls = open_page(browser, served)
    expect(page.locator("#start-target option")).to_have_count(4, timeout=TIMEOUT)
    page.select_option("#start-target", "gated")
    page.fill("#start-input", "go")
    page.fill("#start-thread", "live-1")
    page.click("#start-button")
    page.wait_for_url("**/runs/live-1", timeout=TIMEOUT)
    status = page.locator("#status")
    expect(status).to_have_text("running", timeout=TIMEOUT)
    expect(page.locator('tr[data-agent="waiter"] .status')).to_have_text("running", timeout=TIMEOUT)
    ui_targets.GATE.set()  # no reload from here on: the page follows the run by itself
    expect(status).to_have_text("done", timeout=TIMEOUT)
    expect(page.locator('tr[data-agent="after"] .status')).to_have_text("done", timeout=TIMEOUT)
    expect(page.locator("#events li").first).to_be_visible(timeout=TIMEOUT)
    page.close()
    assert all(u.startswith(served.url + "/") for u in urls), urls


def test_an_interrupted_run_is_approved_from_the_page(browser, served):
    page, urls = open_page(browser, served, "/runs/pay-1")
    expect(page.locator("#status")).to_have_text("interrupted", timeout=TIMEOUT)
    expect(page.locator(".approval")).to_contain_text('payer wants to call pay({"amount":5})')
    assert ui_targets.PAID == []
    page.click(".approval button.approve")
    expect(page.locator("#status")).to_have_text("done", timeout=TIMEOUT)
    expect(page.locator(".approval")).to_have_count(0)
    page.click('tr[data-agent="payer"]')
    expect(page.locator("#agent-detail")).to_contain_text("done: paid 5", timeout=TIMEOUT)
    assert ui_targets.PAID == [5]  # the tool ran exactly once
    # the drawing (SVG from graphviz) loaded inline; no wait_for_function: the page's CSP
    # forbids the eval Playwright polls a string predicate with
    page.locator("#drawing-svg svg").wait_for(state="attached", timeout=TIMEOUT)
    page.close()
    assert all(u.startswith(served.url + "/") for u in urls), urls


def test_a_fork_from_a_middle_checkpoint_leaves_the_original_alone(browser, served):
    page, urls = open_page(browser, served, "/runs/pipe-1")
    middle = page.locator('li.checkpoint:has-text("next: second")')
    expect(middle).to_have_count(1, timeout=TIMEOUT)
    middle.click()
    expect(page.locator("#checkpoint-values")).to_contain_text('"a": "A"', timeout=TIMEOUT)
    page.fill("#fork-values", '{"a": "EDITED"}')
    page.fill("#fork-thread", "forked-1")
    page.click("#fork")
    page.wait_for_url("**/runs/forked-1", timeout=TIMEOUT)
    expect(page.locator("#status")).to_have_text("done", timeout=TIMEOUT)
    page.click('tr[data-agent="second"]')
    expect(page.locator("#agent-detail .output")).to_have_text('"EDITED+B"', timeout=TIMEOUT)
    page.goto(served.url + "/runs/pipe-1")
    page.click('tr[data-agent="second"]')
    expect(page.locator("#agent-detail .output")).to_have_text('"A+B"', timeout=TIMEOUT)
    page.close()
    assert all(u.startswith(served.url + "/") for u in urls), urls


def test_an_answer_with_markup_is_shown_as_text(browser, served):
    page, urls = open_page(browser, served, "/runs/evil-1")
    page.locator('tr[data-agent="evil"]').click(timeout=TIMEOUT)
    detail = page.locator("#agent-detail .message").last
    expect(detail).to_contain_text(ui_targets.EVIL, timeout=TIMEOUT)
    assert page.evaluate("window.pwned") is None
    assert page.locator("#agent-detail script, #agent-detail img").count() == 0
    page.close()
    assert all(u.startswith(served.url + "/") for u in urls), urls


def test_off_loopback_the_page_works_with_the_printed_token(browser, store, targets):
    from graphflow.ui import create_app
    from tests.ui.ui_support import Served

    with Served(create_app(targets, store, token="tok3n")) as served:
        page = browser.new_page()
        denied = page.goto(served.url + "/")
        assert denied is not None and denied.status == 401
        page.goto(served.url + "/?token=tok3n")  # the URL graphflow ui prints
        expect(page.locator("tr.run-row")).to_have_count(3, timeout=TIMEOUT)
        page.locator('tr[data-thread="pipe-1"]').click()
        expect(page.locator("#status")).to_have_text("done", timeout=TIMEOUT)  # the cookie did it
        page.close()
