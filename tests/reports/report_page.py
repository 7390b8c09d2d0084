"""What both browser tests of the HTML reports (compat matrix, migrate report) do to a page: open the report
in headless Chromium, read the visible rows of a table, set and clear the filters of the shared table script.

Needs Debian's `chromium` (`apt-get install -y chromium`) and `websocket-client`; set NEURON_COMPAT_CHROMIUM to
use another binary. Without them the tests using ``open_report`` are skipped.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Iterator

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def chromium() -> str | None:
    candidates = [os.environ.get("NEURON_COMPAT_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"]
    for candidate in filter(None, candidates):
        found = shutil.which(candidate)
        if found:
            return found
    return None


def open_report(html: Path, height: int) -> Iterator:
    """Yield a browser showing ``html`` in a 1400 x ``height`` viewport (for a module-scoped fixture)."""
    executable = chromium()
    if executable is None:
        pytest.skip("headless Chromium not found (apt-get install -y chromium, or set NEURON_COMPAT_CHROMIUM)")
    pytest.importorskip("websocket", reason="websocket-client is not installed (pip install websocket-client)")
    from .cdp import Browser

    with Browser.launch(executable) as browser:
        browser.call("Emulation.setDeviceMetricsOverride", width=1400, height=height, deviceScaleFactor=1, mobile=False)
        browser.html_url = html.as_uri()
        browser.navigate(browser.html_url)
        yield browser


def visible_rows(page, table: str) -> list[str]:
    """The keys of the rows of ``table`` (a CSS selector) that filtering leaves visible, in display order."""
    return page.evaluate(
        f"[...document.querySelectorAll('{table} tbody tr')].filter(r => !r.hidden && r.offsetParent !== null)"
        ".map(r => r.dataset.key)"
    )


def select(page, name: str, value: str) -> None:
    page.evaluate(
        f"(() => {{ const s = document.querySelector('.nm-filters select[data-filter={name}]'); s.value = '{value}';"
        " s.dispatchEvent(new Event('change', {bubbles: true})); })()"
    )


def reset(page) -> None:
    page.evaluate(
        "document.querySelectorAll('.nm-filters [data-filter]').forEach(c => {"
        " c.value = ''; c.dispatchEvent(new Event('input', {bubbles: true})); })"
    )
