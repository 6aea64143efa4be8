"""GET /docs in a real headless Chromium, against ``cardroom serve`` running for real:
the page reads the whole spec, shows every path and schema,
reaches nothing outside the service and logs no error.

Needs Debian's ``chromium`` at /usr/bin/chromium (``apt-get install chromium``);
Playwright drives it and never downloads a browser. Skipped without it, unless
``CI=true``, where a missing browser fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from tests.processes import ROOT, free_port, stop_process, subprocess_env

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOT = Path("/tmp/docs.png")


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    reason = f"{CHROMIUM} is missing (apt-get install chromium)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " (CI=true: the browser test must run)")
    pytest.skip(reason)


def _get(url: str) -> tuple[int, bytes] | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, response.read()
    except OSError:
        return None


@pytest.fixture(scope="module")
def base_url(tmp_path_factory):
    """``cardroom serve`` in embedded mode on a free port, until the module's tests end."""
    _require_chromium()
    port = free_port()
    script = Path(sys.executable).with_name("cardroom")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "service.cli"]
    log_path = tmp_path_factory.mktemp("serve") / "cardroom-serve.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([*command, "serve", "--port", str(port)], cwd=ROOT,
                                env=subprocess_env(), stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while (_get(f"{base}/healthz") or (None,))[0] != 200:
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_process(proc)
            pytest.fail(f"cardroom serve did not answer /healthz:\n{log_path.read_text()}")
        time.sleep(0.1)
    yield base
    stop_process(proc)


@pytest.fixture(scope="module")
def browser(base_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class DocsPage:
    """/docs opened in a fresh page that records console errors and any request that
    leaves the service (those are aborted)."""

    def __init__(self, browser, base_url: str):
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.problems: list[str] = []
        self.outside: list[str] = []
        own = urlsplit(base_url).netloc
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(
            f"console.error: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"uncaught: {e}"))
        self.page.on("response", lambda r: r.status >= 400 and self.problems.append(
            f"{r.status} for {r.url}"))

        def only_the_service(route):
            url = route.request.url
            if urlsplit(url).netloc == own or url.startswith(("data:", "about:")):
                route.continue_()
            else:
                self.outside.append(url)
                route.abort()
        self.page.route("**/*", only_the_service)
        self.page.goto(f"{base_url}/docs")
        self.page.wait_for_selector("body[data-state=ready], body[data-state=error]",
                                    timeout=10_000)
        self.state = self.page.get_attribute("body", "data-state")


@pytest.fixture(scope="module")
def docs(browser, base_url):
    page = DocsPage(browser, base_url)
    yield page
    page.page.close()


@pytest.fixture(scope="module")
def served_spec(base_url) -> dict:
    status, body = _get(f"{base_url}/openapi.yaml")
    assert status == 200
    return yaml.safe_load(body)


def test_docs_page_renders_without_errors_or_outside_requests(docs):
    assert docs.state == "ready", docs.page.inner_text("main")
    assert docs.problems == []
    assert docs.outside == []


def test_docs_page_reads_the_whole_spec(docs, served_spec):
    assert docs.page.evaluate("() => window.cardroomSpec") == served_spec


def test_docs_page_shows_every_operation_with_its_method_and_path(docs, served_spec):
    text = docs.page.inner_text("main")
    for path, item in served_spec["paths"].items():
        assert path in text, f"{path} is not shown"
        for method, operation in item.items():
            if method == "parameters":
                continue
            section = docs.page.locator(f"#op-{operation['operationId']}")
            assert section.count() == 1, f"{method.upper()} {path} has no section"
            head = section.locator(".head").inner_text()
            assert method.upper() in head.upper() and path in head
            for status in operation["responses"]:
                assert status in section.inner_text(), f"{method.upper()} {path}: {status}"
    assert "/v1/tables/{table_id}/hands/{hand_no}/actions" in text


def test_docs_page_shows_every_schema_and_every_link_lands(docs, served_spec):
    for name in served_spec["components"]["schemas"]:
        assert docs.page.locator(f"[id='schema-{name}']").count() == 1, name
    dangling = docs.page.evaluate("""() => [...document.querySelectorAll('a[href^="#"]')]
        .map(a => a.getAttribute('href').slice(1)).filter(id => !document.getElementById(id))""")
    assert dangling == []


def test_docs_page_screenshot_reads_well(docs):
    """Leaves /tmp/docs.png (top of the page) and /tmp/docs-actions.png (an operation)
    for a person to look at."""
    docs.page.evaluate("() => window.scrollTo(0, 0)")
    docs.page.screenshot(path=str(SCREENSHOT))
    docs.page.locator("#op-act").evaluate("section => section.scrollIntoView()")
    docs.page.screenshot(path=str(SCREENSHOT.with_name("docs-actions.png")))
    assert SCREENSHOT.stat().st_size > 10_000
