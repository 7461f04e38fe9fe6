"""The console from 360 px wide to a desktop and by keyboard alone: at 360×740 no view is
wider than the screen (tables scroll inside their box, the navigation behind a Menu button),
a screenshot of each; Tab reaches the skip link, the navigation and a log row, whose Enter
opens it, with a visible focus outline.
"""
from conftest import URL, logged_in, shot, until

VIEWS = {"keys": "#view h1", "usage": "#usage-totals", "log": "tr.row", "conversations": "tr.row",
         "agents": "#view tbody tr", "models": "#view tbody tr", "playground": "#pg-form",
         "health": "#view td"}


def test_every_view_fits_a_360_px_screen(phone):
    logged_in(phone)
    assert phone.is_visible("#menu") and not phone.is_visible("#nav a")
    for name, ready in VIEWS.items():
        phone.goto(URL + "/ui/#" + name)
        try:
            phone.wait_for_selector(ready, state="attached")
        except Exception as timeout:
            raise AssertionError(f"the view {name} never showed {ready}") from timeout
        until(phone, "document.querySelector('#view h1') !== null")
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 360, (name, width)
        wide = phone.evaluate("[...document.querySelectorAll('#view *')].filter(e => "
                              "!e.closest('.table') && e.getBoundingClientRect().right > 360.5)"
                              ".map(e => e.tagName + '#' + e.id + '.' + e.className)")
        assert wide == [], (name, wide)
        shot(phone, f"narrow-{name}.png", full_page=True)
    # A table wider than the screen scrolls inside its box, by keyboard too.
    phone.goto(URL + "/ui/#log")
    phone.wait_for_selector("tr.row")
    assert phone.evaluate("(b => b.scrollWidth > b.clientWidth)(document.querySelector('#view .table'))")
    phone.focus("#view .table")
    for _ in range(5):
        phone.keyboard.press("ArrowRight")
    until(phone, "document.querySelector('#view .table').scrollLeft > 0")
    # A request and a conversation opened fit too.
    for name, row, opened in [("log", "tr.row >> nth=0", "#log-detail pre"),
                              ("conversations", "tr.row:has-text('helper')", ".tool-call")]:
        phone.goto(URL + "/ui/#" + name)
        phone.click(row)
        phone.wait_for_selector(opened)
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 360, (name, width)
        shot(phone, f"narrow-{name}-opened.png", full_page=True)
    # The menu opens the navigation, which then fits too.
    phone.click("#menu")
    assert phone.get_attribute("#menu", "aria-expanded") == "true"
    assert phone.is_visible("#nav a[href='#usage']")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 360
    shot(phone, "narrow-menu.png")
    phone.click("#nav a[href='#usage']")
    phone.wait_for_selector("#usage-totals")
    assert not phone.is_visible("#nav a[href='#usage']")


def test_tab_reaches_the_navigation_and_a_log_row_and_enter_opens_it(page):
    logged_in(page)
    page.goto(URL + "/ui/#log")
    page.reload()  # focus starts at the top of the document
    page.wait_for_selector("tr.row")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "skip"
    order = []
    for _ in range(60):
        page.keyboard.press("Tab")
        order.append(page.evaluate("(e => e.tagName + (e.closest('nav') ? ':nav' : '') + "
                                   "(e.matches('tr.row') ? ':row' : ''))(document.activeElement)"))
        if order[-1].endswith(":row"):
            break
    assert "A:nav" in order, order
    assert order[-1] == "TR:row", order
    assert order.index("A:nav") < order.index("TR:row"), order
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none", outline
    page.keyboard.press("Enter")
    page.wait_for_selector("#log-detail pre")
    # The skip link moves focus into the view without changing the route.
    page.reload()
    page.wait_for_selector("tr.row")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    assert page.evaluate("location.hash") == "#log"
