"""The console's views beyond the first ones, in a real browser against the seeded server
(conftest.py): a key changed in the page applies to requests; conversations (a list, one in
full with its tool call, reached from its request's detail); agents and models as the server
was configured; one list request per view; a screenshot of every view.
"""
import os
import time

from conftest import URL, admin_call, admin_get, chat, logged_in, shot, until


def requests_to(page, part):
    """The admin API requests the page makes whose path holds `part` (a live list)."""
    seen = []
    page.on("request", lambda r: seen.append(r.url) if "/admin/v1" + part in r.url else None)
    return seen


def test_a_key_changed_in_the_page_applies(page):
    secret = admin_call("/keys", {"name": "to-change"})["key"]
    assert chat(secret, "tools/m") == 200  # every model, no limit yet
    logged_in(page)
    page.goto(URL + "/ui/#keys")
    page.click("tr.row:has-text('to-change')")
    assert page.input_value("#edit-rpm") == ""
    page.fill("#edit-rpm", "lots")  # refused by the server, which names the field
    page.click("#key-edit button[type=submit]")
    until(page, "document.getElementById('key-edit-status').textContent.includes('rpm')")
    page.fill("#edit-models", "up/*")
    page.fill("#edit-rpm", "2")
    page.fill("#edit-tpm", "100000")
    page.fill("#edit-budget", "500000")
    page.click("#key-edit button[type=submit]")
    page.wait_for_selector("tr.row:has-text('to-change'):has-text('up/*')")
    until(page, "document.getElementById('key-edit-status').textContent === 'Saved.'")
    shot(page, "console-key-edit.png")
    row = page.text_content("tr.row:has-text('to-change')")
    assert "500000" in row and "100000" in row, row
    listed = [k for k in admin_get("/keys?search=to-change")["keys"]]
    assert [(k["models"], k["rpm"], k["tpm"], k["budget_tokens"]) for k in listed] == \
        [(["up/*"], 2, 100000, 500000)]
    # The server's copy of the keys follows within a second: a model outside the globs is
    # refused, then the third request within the minute.
    deadline = time.monotonic() + 5
    while chat(secret, "tools/m") == 200:
        assert time.monotonic() < deadline, "tools/m is still served to the changed key"
        time.sleep(0.1)
    statuses = [chat(secret, "up/m") for _ in range(3)]
    assert statuses == [200, 200, 429], statuses


def test_a_conversation_shows_its_tool_call_from_the_list_and_from_its_request(page):
    logged_in(page)
    lists = requests_to(page, "/conversations")
    page.goto(URL + "/ui/#conversations")
    page.wait_for_selector("tr.row:has-text('helper')")
    listed = admin_get("/conversations")["conversations"]
    assert len(lists) == 1, lists  # one list request, none per row
    assert len(page.query_selector_all("#view tr.row")) == len(listed) >= 1
    shot(page, "console-conversations.png")
    page.focus("tr.row:has-text('helper')")
    page.keyboard.press("Enter")
    page.wait_for_selector(".tool-call")
    assert len(lists) == 2, lists  # the one opened
    assert page.text_content(".tool-call .tool-name") == "lookup"
    args = page.text_content(".tool-call .tool-args")
    assert "<b>Paris</b>" in args, args  # stored markup shown as text
    assert page.query_selector("#view b") is None
    assert "It is sunny." in page.text_content("#conversation")
    assert "sunny, 21 C" in page.text_content("#conversation")
    shot(page, "console-conversation.png", full_page=True)
    # From the request log: the row of the agent's request links to the conversation.
    page.goto(URL + "/ui/#log")
    page.fill("#log-agent", "helper")
    page.click("#log-filter button")
    until(page, "document.querySelectorAll('tr.row').length > 0 && [...document.querySelectorAll('tr.row')]"
                ".every(r => r.children[3].textContent === 'helper')")
    page.click("tr.row >> nth=0")
    page.wait_for_selector("#log-conversation")
    cost = page.text_content("#log-detail pre")
    assert "cost_usd: $" in cost, cost
    shot(page, "console-request.png")
    page.click("#log-conversation")
    page.wait_for_selector(".tool-call .tool-name")


def test_agents_and_models_show_what_the_server_was_configured_with(page):
    logged_in(page)
    agents_calls = requests_to(page, "/agents")
    page.goto(URL + "/ui/#agents")
    page.wait_for_selector("tr:has-text('Looks things up')")
    helper = page.text_content("tr:has-text('Looks things up')")
    assert "helper" in helper, helper
    agents = admin_get("/agents")["agents"]
    assert len(page.query_selector_all("#view tbody tr")) == len(agents)
    assert agents_calls == [agents_calls[0]], agents_calls
    shot(page, "console-agents.png")
    models_calls = requests_to(page, "/models")
    page.goto(URL + "/ui/#models")
    page.wait_for_selector("#view tbody tr")
    models = admin_get("/models")["models"]
    shown = [r.text_content() for r in page.query_selector_all("#view tbody tr")]
    assert len(shown) == len(models) >= 1
    assert any("tools" in row for row in shown), shown  # the provider `tools` of the config
    assert len(models_calls) == 1, models_calls
    shot(page, "console-models.png")
    page.goto(URL + "/ui/#health")
    page.wait_for_selector("#view td")
    shot(page, "console-health.png")


def test_conversations_page_with_a_cursor_and_search(page):
    seeded = int(os.environ["QORE_CONVERSATIONS"])
    assert seeded > 50  # more than one page
    logged_in(page)
    lists = requests_to(page, "/conversations")
    page.goto(URL + "/ui/#conversations")
    page.wait_for_selector("tr.row")
    first = [r.text_content() for r in page.query_selector_all("tr.row")]
    assert len(first) == 50 and "helper" in first[0], first[:2]  # newest first
    page.click("#conv-more")
    until(page, f"document.querySelectorAll('tr.row').length === {seeded - 50}")
    second = [r.text_content() for r in page.query_selector_all("tr.row")]
    assert not set(first) & set(second), second
    assert len(lists) == 2 and "after=" in lists[1], lists
    assert not page.is_visible("#conv-more")  # the last page
    page.fill("#conv-search", "note-07")
    page.click("#conv-filter button")
    until(page, "document.querySelectorAll('tr.row').length === 1")
    assert "note-07" in page.text_content("tr.row")
    assert len(lists) == 3, lists
