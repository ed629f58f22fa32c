"""The settings file ``quickstart`` leaves in its folder (``newsletter.toml``), so that every
command run there afterwards (``keys create``, ``digest``, ``serve``, ``sync``) finds the same
database and address without exporting anything.

It is TOML as :meth:`Settings.load` reads it, written with tomlkit so that each value is quoted
correctly and the development-only setting carries its warning as a comment. An existing file
is never overwritten: it is created exclusively, and left alone if it is there.
"""

from __future__ import annotations

import os
from pathlib import Path

import tomlkit

from .. import __version__
from ..settings import Settings

#: Owner read and write only: the database URL may carry a password.
FILE_MODE = 0o600


def quickstart_settings_text(settings: Settings, *, development_http: bool) -> str:
    """The file's text: ``database_url`` and ``base_url`` of ``settings``, and, when
    ``development_http``, ``allow_insecure_http_links = true`` marked as development-only.
    The site secret is not written: it is generated into the database on first use, where
    every command finds it."""
    doc = tomlkit.document()
    doc.add(tomlkit.comment(f"Written by `newsletter-connector quickstart` {__version__}."))
    doc.add(
        tomlkit.comment(
            "Every newsletter-connector command run in this folder reads it (unless --config"
        )
    )
    doc.add(tomlkit.comment("or NEWSLETTER_CONFIG names another file; NEWSLETTER_* wins)."))
    doc.add(tomlkit.comment("Settings: docs/configuration.md. The site secret is not here: it is"))
    doc.add(tomlkit.comment("generated into the database on first use."))
    doc.add(tomlkit.nl())
    doc["database_url"] = settings.database_url
    doc["base_url"] = settings.public_base_url
    if development_http:
        doc.add(tomlkit.nl())
        doc.add(
            tomlkit.comment(
                "DEVELOPMENT ONLY: readers' confirm, unsubscribe and profile links travel over"
            )
        )
        doc.add(
            tomlkit.comment(
                "plain http. Remove this line and set an https base_url before real readers."
            )
        )
        flag = tomlkit.item(True)
        flag.comment("DEVELOPMENT ONLY")
        doc["allow_insecure_http_links"] = flag
    return tomlkit.dumps(doc)


def write_new(path: Path, text: str) -> bool:
    """Create ``path`` holding ``text`` (mode :data:`FILE_MODE`); ``False``, touching nothing,
    when the file already exists."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return True
