"""The HTML report in a real headless Chromium, driven over the DevTools protocol: it loads with no console
errors and no network requests, the matrix has one row per architecture, filtering and sorting work, links open
the detail panels, and a full-page screenshot is written to test-artifacts/compat-report.png.

Needs Debian's `chromium` (`apt-get install -y chromium`) and `websocket-client`; set NEURON_COMPAT_CHROMIUM to
use another binary.
"""

from __future__ import annotations

import pytest

from reports.compat.render import write_report
from reports.compat.results import load_results
from reports.compat.summary import build_summary

from .conftest import RESULTS
from .report_page import ARTIFACTS, open_report, reset, select
from .report_page import visible_rows as rows_of

pytestmark = pytest.mark.browser

@pytest.fixture(scope="module")
def page(tmp_path_factory):
    html = write_report(build_summary(load_results(RESULTS)), tmp_path_factory.mktemp("html") / "report.html")
    yield from open_report(html, height=1000)


def visible_rows(page) -> list[str]:
    return rows_of(page, "#matrix-table")


def test_loads_without_console_errors_or_network(page):
    assert page.evaluate("document.readyState") == "complete"
    assert page.console_errors() == []
    assert [url for url in page.requested_urls() if url != page.html_url] == []
    assert page.evaluate("document.title").startswith("TorchNeuron compatibility matrix")


def test_one_row_per_architecture(page):
    assert visible_rows(page) == [
        "llama", "qwen2", "mistral", "qwen3", "gemma3_text", "qwen3_moe", "phi3", "gpt2", "falcon_h1", "mamba"
    ]
    assert page.evaluate("document.querySelector('[data-count]').textContent") == "10 of 10 shown"
    assert page.evaluate("document.querySelectorAll('svg.nm-chart rect').length") > 20  # the charts drew


def test_filtering_by_typed_text_and_selects(page):
    reset(page)
    page.type_text(".nm-filters input[type=search]", "qwen")
    assert visible_rows(page) == ["qwen2", "qwen3", "qwen3_moe"]
    assert page.evaluate("document.querySelector('[data-count]').textContent") == "3 of 10 shown"
    # the detail panels of filtered-out architectures hide too
    assert page.evaluate("document.getElementById('arch-llama').hidden") is True
    assert page.evaluate("document.getElementById('arch-qwen3').hidden") is False
    select(page, "verdict", "unsupported")
    assert visible_rows(page) == ["qwen3_moe"]
    reset(page)
    select(page, "status", "recompiles")
    assert visible_rows(page) == ["qwen3", "gpt2"]
    reset(page)
    page.type_text(".nm-filters input[type=search]", "no such architecture")
    assert visible_rows(page) == []
    assert page.evaluate("document.querySelector('.nm-empty').hidden") is False
    reset(page)
    assert len(visible_rows(page)) == 10


def test_sorting_by_clicking_headers(page):
    reset(page)
    first_call = "#matrix-table thead th:nth-child(9)"
    assert page.evaluate(f"document.querySelector('{first_call}').textContent") == "First call"
    page.click(first_call)
    assert visible_rows(page)[:3] == ["mamba", "mistral", "gpt2"]  # ascending; no time (qwen3_moe, falcon_h1) last
    assert visible_rows(page)[-2:] == ["qwen3_moe", "falcon_h1"]
    page.click(first_call)
    assert visible_rows(page)[:2] == ["gemma3_text", "qwen2"]  # descending: the slowest compile first
    page.click("#matrix-table thead th:nth-child(1)")
    assert visible_rows(page)[:3] == ["llama", "qwen2", "mistral"]


def test_headline_per_evidence_level_and_the_published_figures(page):
    reset(page)
    headline = page.evaluate("document.getElementById('evidence-headline').innerText")
    assert headline == ("eager: 7 of 10 pass (observed, neuron) · compiled: 3 of 9 pass (observed, neuron) · "
                        "tp: 3 of 7 pass (observed, neuron)")
    labels = page.evaluate("[...document.querySelectorAll('#published-table tbody td:first-child')].map(c => c.innerText)")
    assert labels[0] == "TorchNeuron (launch post)" and "optimum-neuron 0.4.5 (launch post)" in labels
    shares = page.evaluate("[...document.querySelectorAll('#published-table tbody td:last-child')].map(c => c.innerText)")
    assert shares[0] == "89%" and shares[1] == "10%"
    headers = page.evaluate("[...document.querySelectorAll('#matrix-table thead th')].map(c => c.textContent.trim())")  # innerText follows the CSS uppercase
    assert headers[3] == "Evidence" and headers[7] == "optimum-neuron 0.4.5"
    cells = page.evaluate("[...document.querySelectorAll('#matrix-table tbody tr[data-key=llama] td')].map(c => c.innerText)")
    assert cells[3] == "observed" and cells[7] == "yes"
    page.click("#difference summary")
    page.evaluate("new Promise(r => setTimeout(r, 50))")
    assert page.evaluate("document.getElementById('difference').open") is True
    rows = page.evaluate("[...document.querySelectorAll('#difference-table tbody tr')].map(r => r.dataset.arch)")
    assert len(rows) == 9 and "llama" not in rows and rows[0] == "qwen2"


def test_architecture_link_opens_its_detail_panel(page):
    reset(page)
    assert page.evaluate("document.getElementById('arch-phi3').open") is False
    page.click("#matrix-table a[href='#arch-phi3']")
    page.evaluate("new Promise(r => setTimeout(r, 50))")
    assert page.evaluate("document.getElementById('arch-phi3').open") is True
    text = page.evaluate("document.getElementById('arch-phi3').innerText")
    assert "0.31 / 0.02" in text and "TimeoutError" in text


def test_screenshot(page):
    page.navigate(page.html_url)  # a fresh page: rank order, no filter, nothing open
    page.evaluate("document.getElementById('arch-gemma3-text').open = true")
    shot = page.screenshot(ARTIFACTS / "compat-report.png")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000
    print(f"screenshot: {shot}")
    assert page.console_errors() == []
