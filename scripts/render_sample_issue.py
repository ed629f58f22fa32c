#!/usr/bin/env python3
"""Render the sample issue with the built-in ``html`` renderer and screenshot it.

Writes ``docs/images/sample-issue.html`` (what the renderer produced, placeholder included) and
``docs/images/sample-issue.png`` (and ``sample-issue-dark.png`` with ``--dark``) using headless
Chromium (Debian: ``apt-get install chromium``); with ``--language es``, the edition in that
language as ``sample-issue-es.html`` and ``.png``. Only the docs need this; no test depends on
it.

    .venv/bin/python scripts/render_sample_issue.py [--dark] [--language es] [--chromium PATH]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from newsletter_connector.plugins.html_renderer import render_html
from newsletter_connector.settings import Settings
from newsletter_connector.testing.issue_samples import sample_issue_content

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
WINDOW = "720,1600"


def sample_html(language: str = "en") -> str:
    settings = Settings(
        base_url="https://news.example.org/newsletter",
        site_name="Silver Times",
        postal_address="Silver Times Media\n100 Main Street\nSpringfield, IL 62701",
        language=language,
    )
    issue = {
        "kind": "daily",
        "cadence": "daily",
        "date": "2026-11-21",
        "subject": "Silver Times: Saturday, November 21, 2026",
        "site_url": settings.effective_site_url,
        "postal_address": settings.postal_address,
        "sections": sample_issue_content(),
    }
    return render_html(issue, settings)


def screenshot(chromium: str, html_file: Path, png: Path, *, dark: bool) -> None:
    with tempfile.TemporaryDirectory() as profile:
        argv = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--window-size={WINDOW}",
            f"--screenshot={png}",
        ]
        if dark:
            argv.append("--force-dark-mode")
        argv.append(html_file.as_uri())
        subprocess.run(argv, check=True, capture_output=True, timeout=120)  # noqa: S603


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--dark", action="store_true", help="also render in dark mode")
    parser.add_argument("--language", default="en", help="the edition's language (en, es)")
    args = parser.parse_args()
    IMAGES.mkdir(parents=True, exist_ok=True)
    name = "sample-issue" if args.language == "en" else f"sample-issue-{args.language}"
    html_file = IMAGES / f"{name}.html"
    html_file.write_text(sample_html(args.language), encoding="utf-8")
    screenshot(args.chromium, html_file, IMAGES / f"{name}.png", dark=False)
    print(f"wrote {IMAGES / f'{name}.png'}")
    if args.dark:
        screenshot(args.chromium, html_file, IMAGES / "sample-issue-dark.png", dark=True)
        print(f"wrote {IMAGES / 'sample-issue-dark.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
