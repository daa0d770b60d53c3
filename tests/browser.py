"""Headless Chromium, driven from the command line (no browser download, no driver)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1366,900", "--virtual-time-budget=20000",
]


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if path := shutil.which(name):
            return path
    raise RuntimeError("headless Chromium is needed for the Browser tests: install Debian's 'chromium' "
                       "(scripts/test.sh does this when it runs as root)")


def _run(url: str, *extra: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *extra, url],
                              capture_output=True, text=True, timeout=180)


def dump_dom(url: str) -> str:
    """The page's DOM after its scripts ran."""
    return _run(url, "--dump-dom").stdout


def screenshot(url: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    _run(url, f"--screenshot={path}")
    return path
