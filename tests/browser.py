"""What the real-browser tests share: ``cardroom serve`` (embedded) on a free port, Debian's
Chromium driven by Playwright (never a downloaded browser), and a page that records what
it asked for, what it was answered and what it logged.

Needs ``/usr/bin/chromium`` (``apt-get install chromium``); without it a test is skipped,
unless ``CI=true``, where a missing browser fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit

import pytest

from tests.processes import ROOT, free_port, stop_process, subprocess_env

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def require_chromium() -> None:
    if CHROMIUM.exists():
        return
    reason = f"{CHROMIUM} is missing (apt-get install chromium)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason + " (CI=true: the browser test must run)")
    pytest.skip(reason)


def http_get(url: str) -> tuple[int, bytes] | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, response.read()
    except OSError:
        return None


@contextmanager
def cardroom_serve(log_dir: Path) -> Iterator[str]:
    """``cardroom serve`` in embedded mode (no REDIS_URL) on a free port: its base URL."""
    port = free_port()
    script = Path(sys.executable).with_name("cardroom")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "service.cli"]
    log_path = log_dir / "cardroom-serve.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([*command, "serve", "--port", str(port)], cwd=ROOT,
                                env=subprocess_env(), stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while (http_get(f"{base}/healthz") or (None,))[0] != 200:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"cardroom serve did not answer /healthz:\n{log_path.read_text()}")
            time.sleep(0.1)
        yield base
    finally:
        stop_process(proc)


@contextmanager
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class RecordedPage:
    """A fresh page that records console errors, uncaught errors, answers of 400 and above
    (but those in ``refusals``: (status, URL path suffix) pairs a test expects), every
    request and response, and any request that leaves the service (those are aborted)."""

    def __init__(self, browser, base_url: str, refusals: tuple[tuple[int, str], ...] = (),
                 viewport: dict | None = None):
        self.page = browser.new_page(viewport=viewport or {"width": 1400, "height": 900})
        self.problems: list[str] = []
        self.outside: list[str] = []
        self.requests: list = []
        self.responses: list = []
        self.refusals = refusals
        self.origin = urlsplit(base_url).netloc
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.problems.append(f"uncaught: {e}"))
        self.page.on("request", lambda request: self.requests.append(request))
        self.page.on("response", self._response)
        self.page.route("**/*", self._only_the_service)

    def is_own(self, url: str) -> bool:
        """On the service's origin (a blob: URL the page made counts as its own)."""
        inner = url.removeprefix("blob:")
        return urlsplit(inner).netloc == self.origin or url.startswith(("data:", "about:"))

    def _expected(self, status: int, url: str) -> bool:
        path = urlsplit(url).path
        return any(status == code and path.endswith(suffix) for code, suffix in self.refusals)

    def _console(self, message) -> None:
        if message.type != "error":
            return
        url = (message.location or {}).get("url", "")
        refused = [code for code, _ in self.refusals if f"status of {code}" in message.text]
        if refused and self._expected(refused[0], url):
            return  # the browser's own note of an answer the test expects
        self.problems.append(f"console.error: {message.text} ({url})")

    def _response(self, response) -> None:
        self.responses.append(response)
        if response.status >= 400 and not self._expected(response.status, response.url):
            self.problems.append(f"{response.status} for {response.url}")

    def _only_the_service(self, route) -> None:
        url = route.request.url
        if self.is_own(url):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()
