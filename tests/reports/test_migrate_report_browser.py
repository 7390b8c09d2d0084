"""The neuron-migrate HTML report in a real headless Chromium, driven over the DevTools protocol (the helper of the
compat browser test, tests/reports/cdp.py): it loads with no console errors and no network requests, there is one
TODO panel per file with something to do, line links open the right panel, the changes table filters and sorts,
and a full-page screenshot is written to test-artifacts/migrate-report.png.

Needs Debian's `chromium` (`apt-get install -y chromium`) and `websocket-client`; set NEURON_COMPAT_CHROMIUM to
use another binary.
"""

from __future__ import annotations

import pytest

from reports.migrate_report import write

from .report_page import ARTIFACTS, open_report, reset, select
from .report_page import visible_rows as rows_of
from .test_migrate_report import RUN

pytestmark = pytest.mark.browser

PANELS = ["file-src-infer-py", "file-scripts-launch-sh", "file-src-broken-py", "file-requirements-a-txt-2"]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    html = tmp_path_factory.mktemp("html") / "migrate-report.html"
    write(RUN, html)
    yield from open_report(html, height=900)


def fresh(page, fragment: str = "") -> None:
    """A full load (not a same-document jump): about:blank first, then the report."""
    page.navigate("about:blank")
    page.navigate(page.html_url + fragment)


def open_panels(page) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('#todos details')].filter(d => d.open).map(d => d.id)")


def visible_rows(page) -> list[str]:
    return rows_of(page, "#changes")


def column(page, n: int) -> list[str]:
    return page.evaluate(
        f"[...document.querySelectorAll('#changes tbody tr')].filter(r => !r.hidden).map(r => r.cells[{n}].textContent.trim())"
    )


def in_viewport(page, element_id: str) -> bool:
    return page.evaluate(
        f"(() => {{ const r = document.getElementById('{element_id}').getBoundingClientRect();"
        " return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; })()"
    )


def test_loads_without_console_errors_or_network(page):
    fresh(page)
    assert page.evaluate("document.readyState") == "complete"
    assert page.console_errors() == []
    assert [url for url in page.requested_urls() if url != page.html_url] == []
    assert page.evaluate("document.title") == "neuron-migrate report: 5 TODOs, 4 fixes, 1 error"
    # the shared look: header band, stat cards, the shared table script
    assert page.evaluate("getComputedStyle(document.querySelector('.nm-header')).backgroundImage").startswith("linear-gradient")
    assert page.evaluate("[...document.querySelectorAll('#headline .nm-stat .value')].map(v => v.textContent)") == ["5", "4", "1", "7"]


def test_todos_come_first_one_panel_per_file(page):
    fresh(page)
    assert page.evaluate("[...document.querySelectorAll('#todos details')].map(d => d.id)") == PANELS
    assert open_panels(page) == []
    # each panel lists its file's TODOs and errors, in line order (errors first), each line linking to its anchor
    lines = page.evaluate(
        "[...document.querySelectorAll('#todos details')].map(d => [...d.querySelectorAll('.nm-lines > li .nm-line')]"
        ".map(a => a.textContent))"
    )
    assert lines == [["L10", "L10"], ["L3", "L7"], ["L2"], ["L2"]]
    # TODOs above the changes on the page
    assert page.evaluate(
        "document.getElementById('todos').getBoundingClientRect().bottom <= document.getElementById('changes').getBoundingClientRect().top"
    )


def test_expand_all_toggles_every_panel(page):
    fresh(page)
    page.click("[data-toggle-details=todos]")
    assert open_panels(page) == PANELS
    assert page.evaluate("document.querySelector('[data-toggle-details]').textContent") == "Collapse all"
    page.click("[data-toggle-details=todos]")
    assert open_panels(page) == []


def test_a_line_link_opens_the_right_panel(page):
    fresh(page)
    # a TODO row of the changes table links to the line in the TODO list above
    page.click("#changes a[href='#file-scripts-launch-sh-L7']")
    page.evaluate("new Promise(r => setTimeout(r, 50))")
    assert page.evaluate("location.hash") == "#file-scripts-launch-sh-L7"
    assert open_panels(page) == ["file-scripts-launch-sh"]
    assert page.evaluate("document.querySelector(':target').id") == "file-scripts-launch-sh-L7"
    assert in_viewport(page, "file-scripts-launch-sh-L7")
    assert "NEURON_RT_STOCHASTIC_ROUNDING_EN" in page.evaluate("document.getElementById('file-scripts-launch-sh-L7').innerText")
    # the file link opens the file's panel
    page.click("#changes a[href='#file-src-infer-py']")
    page.evaluate("new Promise(r => setTimeout(r, 50))")
    assert "file-src-infer-py" in open_panels(page)


def test_loading_with_a_line_anchor_opens_its_panel(page):
    fresh(page, "#file-src-infer-py-L10")
    assert open_panels(page) == ["file-src-infer-py"]
    assert in_viewport(page, "file-src-infer-py-L10")
    assert page.console_errors() == []


def test_changes_filter(page):
    fresh(page)
    assert len(visible_rows(page)) == 10
    assert page.evaluate("document.querySelector('[data-count]').textContent") == "10 of 10 shown"
    select(page, "severity", "todo")
    assert column(page, 2) == ["todo"] * 5
    assert page.evaluate("document.querySelector('[data-count]').textContent") == "5 of 10 shown"
    select(page, "kind", "shell")
    assert column(page, 0) == ["scripts/launch.sh", "scripts/launch.sh"]
    reset(page)
    select(page, "rule", "NM301")
    assert column(page, 1) == ["14", "15"]
    reset(page)
    page.type_text(".nm-filters input[type=search]", "stochastic")
    assert column(page, 3) == ["NM405"]
    reset(page)
    page.type_text(".nm-filters input[type=search]", "no such finding")
    assert visible_rows(page) == []
    assert page.evaluate("document.querySelector('#changes + .nm-empty').hidden") is False
    reset(page)
    assert len(visible_rows(page)) == 10


def test_changes_sort(page):
    fresh(page)
    page.click("#changes thead th:nth-child(3)")  # severity: errors, then TODOs, then fixes
    assert column(page, 2) == ["error"] + ["todo"] * 5 + ["fixed"] * 4
    page.click("#changes thead th:nth-child(2)")  # line, numerically
    assert column(page, 1) == ["1", "2", "2", "2", "3", "7", "10", "10", "14", "15"]
    page.click("#changes thead th:nth-child(2)")
    assert column(page, 1)[:3] == ["15", "14", "10"]


def test_screenshot(page):
    fresh(page, "#file-src-infer-py-L10")
    page.evaluate("document.getElementById('file-scripts-launch-sh').open = true; scrollTo(0, 0)")
    shot = page.screenshot(ARTIFACTS / "migrate-report.png")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000
    print(f"screenshot: {shot}")
    assert page.console_errors() == []
