"""Shared parts of the console's browser tests: Debian's Chromium through Playwright (no
browser download), a fresh page per test, the admin API read directly (to compare the page
with), and waiting without the string eval the page's CSP forbids.

The environment comes from the Rust test that started the server: QORE_URL (the server),
QORE_ADMIN (an admin credential), QORE_API_KEY (an ordinary key), QORE_SHOTS (where
screenshots go), QORE_LOG_ROWS (rows seeded into the request log).
"""
import json
import os
import time
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import sync_playwright

URL = os.environ["QORE_URL"]
ADMIN = os.environ["QORE_ADMIN"]
API_KEY = os.environ.get("QORE_API_KEY", "")
SHOTS = os.environ["QORE_SHOTS"]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        yield b
        b.close()


def new_page(browser, width=1280, height=900):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(10_000)
    return context, page


@pytest.fixture()
def page(browser):
    context, page = new_page(browser)
    yield page
    context.close()


@pytest.fixture()
def phone(browser):
    """A page 360 px wide, 740 high."""
    context, page = new_page(browser, 360, 740)
    yield page
    context.close()


def admin_call(path, body=None, method=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(URL + "/admin/v1" + path, data=data, method=method, headers={
        "authorization": "Bearer " + ADMIN, "content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def admin_get(path):
    return admin_call(path)


def chat(key, model):
    """A chat request with `key`: its HTTP status."""
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(URL + "/v1/chat/completions", data=body, headers={
        "authorization": "Bearer " + key, "content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as refused:
        return refused.code


def until(page, expression, seconds=10):
    """Wait until `expression` is true in the page (polled with evaluate: the page's CSP
    forbids the string eval wait_for_function uses)."""
    deadline = time.monotonic() + seconds
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, expression
        time.sleep(0.05)


def log_in(page, credential=ADMIN):
    page.goto(URL + "/ui/")
    page.fill("#credential", credential)
    page.click("#login button[type=submit]")


def logged_in(page):
    """Log in through the form and wait for the navigation (shown, or behind the menu
    button on a narrow page)."""
    log_in(page)
    page.wait_for_selector("#nav:not([hidden])", state="attached")


def shot(page, name, full_page=False):
    page.screenshot(path=os.path.join(SHOTS, name), full_page=full_page)
