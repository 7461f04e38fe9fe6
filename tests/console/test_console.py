"""The console in a real browser (Debian's Chromium driven by Playwright, no browser
download) against a real qore serve on loopback, started and seeded by
crates/qore-serve/tests/console_browser.rs (see conftest.py for what it passes): login,
keys, usage, the log, stored markup, the playground.
"""
import json
import os
import time
import urllib.request
import urllib.error

from conftest import ADMIN, API_KEY, SHOTS, URL, admin_get, log_in, until


def test_a_wrong_credential_and_an_api_key_are_refused(page):
    for credential in ["qore-wrong", API_KEY]:
        log_in(page, credential)
        until(page, "document.getElementById('login-error').textContent.length > 0")
        assert page.is_visible("#login")
        assert not page.is_visible("#nav")


def test_log_in_create_a_key_see_it_once_and_revoke_it(page):
    log_in(page)
    page.wait_for_selector("#key-create")
    assert page.evaluate("localStorage.length") == 0
    page.fill("#key-name", "from-the-browser")
    page.click("#key-create button")
    secret = page.text_content("#new-secret", timeout=10_000)
    assert secret.startswith("qore-")
    page.screenshot(path=os.path.join(SHOTS, "console-keys.png"))
    page.reload()
    page.wait_for_selector("#key-create")
    page.wait_for_selector("text=from-the-browser")
    assert secret not in page.content()
    page.on("dialog", lambda dialog: dialog.accept())
    page.click("tr.row:has-text('from-the-browser')")
    page.click("#key-revoke")
    until(page, "[...document.querySelectorAll('tr.row')].some(r => "
                "r.textContent.includes('from-the-browser') && r.textContent.includes('UTC', 30))")
    body = json.dumps({"model": "up/m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(URL + "/v1/chat/completions", data=body, headers={
        "authorization": "Bearer " + secret, "content-type": "application/json"})
    # The server's copy of the keys follows within a second.
    deadline = time.monotonic() + 5
    while True:
        try:
            urllib.request.urlopen(request, timeout=10).read()
        except urllib.error.HTTPError as refused:
            assert refused.code == 401
            break
        assert time.monotonic() < deadline, "the revoked key is still served"
        time.sleep(0.1)


def test_usage_totals_and_chart_match_the_api(page):
    log_in(page)
    page.wait_for_selector("#nav:not([hidden])")
    page.goto(URL + "/ui/#usage")
    page.wait_for_selector("#usage-totals")
    page.wait_for_selector("#chart canvas")
    total = admin_get("/usage?by=total")["rows"][0]
    for field in ["requests", "errors", "tokens_in", "tokens_out"]:
        shown = page.text_content(f"[data-total={field}]")
        assert int(shown) == total[field], field
    assert total["cost_usd"] > 0  # the agent `helper` has a price
    shown = float(page.get_attribute("[data-total=cost_usd]", "data-value"))
    assert round(shown, 6) == round(total["cost_usd"], 6)
    assert page.text_content("[data-total=cost_usd]") == "$" + str(round(total["cost_usd"], 6))
    page.screenshot(path=os.path.join(SHOTS, "console-usage.png"), full_page=True)


def test_the_log_filters_to_a_failed_request_with_one_list_request(page):
    log_in(page)
    page.wait_for_selector("#nav:not([hidden])")
    lists = []
    page.on("request", lambda r: lists.append(r.url) if "/admin/v1/requests" in r.url else None)
    page.goto(URL + "/ui/#log")
    page.wait_for_selector("tr.row")
    assert len(lists) == 1, lists
    assert int(os.environ["QORE_LOG_ROWS"]) >= 10_000
    assert len(page.query_selector_all("tr.row")) == 50
    page.select_option("#log-status", "failed")
    page.click("#log-filter button")
    until(page, "[...document.querySelectorAll('tr.row')].every(r => "
                "Number(r.children[1].textContent) >= 400)")
    assert len(lists) == 2, lists
    page.click("tr.row >> nth=0")
    page.wait_for_selector("#log-detail pre")
    assert "error_kind" in page.text_content("#log-detail pre")
    assert len(lists) == 3  # the one row in full, nothing per row
    page.screenshot(path=os.path.join(SHOTS, "console-log.png"), full_page=False)


def test_stored_markup_shows_as_text(page):
    log_in(page)
    page.wait_for_selector("#nav:not([hidden])")
    page.goto(URL + "/ui/#log")
    page.fill("#log-model", "<img src=x onerror=window.pwned=1>")
    page.click("#log-filter button")
    page.wait_for_selector("tr.row:has-text('<img src=x')")
    page.click("tr.row >> nth=0")
    page.wait_for_selector("#log-detail pre")
    assert "<script>window.pwned=1</script>" in page.text_content("#log-detail pre")
    assert page.evaluate("window.pwned") is None
    assert page.query_selector("#view img") is None and page.query_selector("#view script") is None


def test_the_playground_streams(page):
    log_in(page)
    page.wait_for_selector("#nav:not([hidden])")
    page.goto(URL + "/ui/#playground")
    # The configured agents and models are offered as choices.
    until(page, "document.querySelectorAll('#pg-choices option[value=helper]').length === 1 && "
                "document.querySelectorAll('#pg-choices option[value=\\'tools/m\\']').length === 1")
    page.fill("#pg-key", API_KEY)
    page.fill("#pg-model", "up/m")
    page.fill("#pg-prompt", "count")
    page.click("#pg-form button")
    seen = []
    deadline = time.monotonic() + 10
    while "one two three" not in seen[-1:] and time.monotonic() < deadline:
        text = page.text_content("#pg-out")
        if not seen or seen[-1] != text:
            seen.append(text)
        time.sleep(0.03)
    assert seen[-1] == "one two three", seen
    partial = [t for t in seen if t and t != "one two three"]
    assert partial and all("one two three".startswith(t) for t in partial), seen
    page.screenshot(path=os.path.join(SHOTS, "console-playground.png"))
