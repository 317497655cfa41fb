"""A real browser for the tests of generated pages: headless Chromium driven by Playwright, over a local server.

``browser_page(folder)`` serves ``folder`` over HTTP on localhost and yields a Playwright page that records every
console error and failed request (``Visit.problems``); it skips the test, saying why, when Playwright or Chromium
is missing. ``make test`` installs Chromium first where it can (the Makefile's ``browser`` step). The fleet pages'
tests use it, and so can the documentation site's.

Chromium is Debian's (/usr/bin/chromium, or $FLUXPLANE_CHROMIUM), not Playwright's download, so nothing is
fetched at test time; it runs without its sandbox (tests run as root in CI) and with every background request
off, so a request the page did not make cannot fail the test.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: Where Debian's chromium package puts the browser.
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
#: How a page is shown for screenshots: a laptop's window.
VIEWPORT = {"width": 1440, "height": 900}


def chromium() -> str | None:
    """The Chromium to drive: $FLUXPLANE_CHROMIUM, else Debian's, else one on PATH; None when there is none."""
    wanted = os.environ.get("FLUXPLANE_CHROMIUM")
    if wanted:
        return wanted if os.access(wanted, os.X_OK) else None
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    return shutil.which("chromium") or shutil.which("chromium-browser")


def missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[dev]')"
    if chromium() is None:
        where = os.environ.get("FLUXPLANE_CHROMIUM") or CHROMIUM
        return f"Chromium is not installed ({where}: apt-get install chromium, or make test as root on Debian)"
    return None


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` over HTTP on a free localhost port; yields its base URL (ending in ``/``)."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@dataclass
class Visit:
    """A browser page on the served folder, and what went wrong while it was used."""

    page: Any
    base: str
    problems: list[str] = field(default_factory=list)

    def open(self, path: str) -> Any:
        """Go to ``path`` below the served folder; the HTTP response (a status of 400 or more is a problem)."""
        response = self.page.goto(self.base + path, wait_until="load")
        if response is None or response.status >= 400:
            self.problems.append(f"{path}: HTTP {None if response is None else response.status}")
        return response


@contextlib.contextmanager
def browser_page(folder: Path) -> Iterator[Visit]:
    """A Visit of ``folder`` in headless Chromium; skips the test when the browser cannot run here."""
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with serve(folder) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            visit = Visit(page, base)
            page.on("console", lambda message: _console(visit, message))
            page.on("pageerror", lambda error: visit.problems.append(f"{page.url}: {error}"))
            page.on("requestfailed", lambda request: visit.problems.append(f"failed request {request.url}"))
            page.on("response", lambda response: _response(visit, response))
            yield visit
        finally:
            browser.close()


def _console(visit: Visit, message: Any) -> None:
    if message.type == "error":
        visit.problems.append(f"{visit.page.url}: console error: {message.text}")


def _response(visit: Visit, response: Any) -> None:
    if response.status >= 400:
        visit.problems.append(f"{response.url}: HTTP {response.status}")
