"""The console's usage numbers against `qore serve usage --json` (run by
crates/qore-cli/tests/cli_console_usage.rs, which passes the CLI's output: QORE_CLI_USAGE for
every row, QORE_CLI_USAGE_KEY for the key QORE_KEY_ID since the UTC day QORE_SINCE). Not
collected with the other console tests (its name is not test_*): it needs that output.
"""
import json
import os

from conftest import URL, logged_in, shot, until

FIELDS = ["requests", "errors", "tokens_in", "tokens_out"]


def sums(report):
    rows = json.loads(report)
    assert rows, report
    total = {f: sum(r[f] for r in rows) for f in FIELDS}
    if any("cost_usd" in r for r in rows):
        total["cost_usd"] = round(sum(r.get("cost_usd") or 0 for r in rows), 6)
    return total


def shown(page):
    numbers = {f: int(page.get_attribute(f"[data-total={f}]", "data-value")) for f in FIELDS}
    numbers["cost_usd"] = round(float(page.get_attribute("[data-total=cost_usd]", "data-value")), 6)
    return numbers


def compare(page, report):
    want = sums(report)
    got = shown(page)
    assert {f: got[f] for f in want} == want
    assert want["requests"] > 0 and want["tokens_in"] > 0


def test_the_usage_totals_equal_the_cli_for_every_row(page):
    logged_in(page)
    page.goto(URL + "/ui/#usage")
    page.wait_for_selector("#usage-totals")
    compare(page, os.environ["QORE_CLI_USAGE"])
    shot(page, "console-usage-all.png", full_page=True)


def test_the_usage_totals_equal_the_cli_for_one_key_since_a_day(page):
    logged_in(page)
    page.goto(URL + "/ui/#usage")
    page.wait_for_selector("#usage-totals")
    before = page.get_attribute("[data-total=requests]", "data-value")
    page.fill("#usage-key", os.environ["QORE_KEY_ID"])
    page.fill("#usage-since", os.environ["QORE_SINCE"])
    page.click("#usage-filter button")
    until(page, f"document.querySelector('[data-total=requests]').dataset.value !== '{before}'")
    compare(page, os.environ["QORE_CLI_USAGE_KEY"])
    shot(page, "console-usage-key.png", full_page=True)
