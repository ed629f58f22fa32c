"""The languages of the reader pages and of the edition's fixed words (docs/reader-pages.md,
"Languages"): gettext catalogs managed with Babel, English built in (the messages themselves),
Spanish shipped compiled in the package, and any a site adds in ``catalog_dir``.

Text to translate is marked where it is written: in templates with ``_()`` and
``{% trans %}``, in Python with :func:`N_` (a marker only; the page translates it as it is
shown). The API's values never pass through a catalog.
"""

from __future__ import annotations

import gettext
import re
from datetime import date as Date
from functools import cached_property, lru_cache
from pathlib import Path

from babel.core import Locale, UnknownLocaleError
from babel.dates import format_date
from babel.support import Translations

from .model.issue import long_date
from .settings import Settings, SettingsError

#: The package's compiled catalogs: ``locale/<language>/LC_MESSAGES/messages.mo``.
LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "messages"
#: The language the messages are written in: it needs no catalog.
SOURCE_LANGUAGE = "en"
#: ``Accept-Language`` entries: a language range and an optional weight.
_RANGE = re.compile(
    r"^\s*([A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)\s*(?:;\s*q\s*=\s*([0-9.]+))?\s*$"
)


def N_(message: str) -> str:
    """Mark ``message`` for the catalogs (extraction finds it); the page translates it when it
    shows it."""
    return message


class Languages:
    """The languages installed for a site (``catalog_dir``: its own catalogs, over the
    package's), the one it is shown in (``language``) and whether a reader's browser may pick
    another (``from_browser``), and each language's translations."""

    def __init__(
        self, *, language: str, catalog_dir: str | None = None, from_browser: bool = False
    ) -> None:
        self.language = language
        self.from_browser = from_browser
        self.folders = [Path(catalog_dir)] if catalog_dir else []
        if self.folders and not self.folders[0].is_dir():
            raise SettingsError(
                "setting catalog_dir (NEWSLETTER_CATALOG_DIR) is invalid: "
                f"{catalog_dir!r} is not a folder"
            )
        self.folders.append(LOCALE_DIR)
        if language not in self.installed:
            raise SettingsError(
                f"setting language (NEWSLETTER_LANGUAGE) is invalid: {language!r} has no "
                f"catalog; installed: {', '.join(self.installed)}"
            )
        self._translations: dict[str, gettext.NullTranslations] = {}

    @classmethod
    def of(cls, settings: Settings) -> Languages:
        """The languages of ``settings`` (:class:`SettingsError` naming a bad one)."""
        return cls(
            language=settings.language,
            catalog_dir=settings.catalog_dir,
            from_browser=settings.language_from_browser,
        )

    @cached_property
    def installed(self) -> tuple[str, ...]:
        """Every language with a compiled catalog (and English), sorted."""
        found = {SOURCE_LANGUAGE}
        for folder in self.folders:
            for catalog in folder.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"):
                found.add(catalog.parent.parent.name)
        return tuple(sorted(found))

    def translations(self, language: str) -> gettext.NullTranslations:
        """The translations of ``language``: the site's catalog over the package's, message by
        message; English (or no catalog) translates nothing."""
        if language not in self._translations:
            merged: gettext.NullTranslations = gettext.NullTranslations()
            for folder in reversed(self.folders):  # the package's first, the site's on top
                found = Translations.load(str(folder), [language], DOMAIN)
                if isinstance(found, Translations):
                    if isinstance(merged, Translations):
                        merged.merge(found)
                    else:
                        merged = found
            self._translations[language] = merged
        return self._translations[language]

    def for_reader(self, accept_language: str | None) -> str:
        """The language to show a reader: the first of ``accept_language`` that is installed
        when ``language_from_browser`` is on, else the site's."""
        if not self.from_browser or not accept_language:
            return self.language
        for wanted in preferred(accept_language):
            if wanted in self.installed:
                return wanted
            base = wanted.split("_")[0]
            if base in self.installed:
                return base
        return self.language


def preferred(accept_language: str) -> list[str]:
    """The languages of an ``Accept-Language`` header, most wanted first (weight 0 and ``*``
    left out), as ``es`` or ``es_MX``."""
    weighted: list[tuple[float, int, str]] = []
    for index, entry in enumerate(accept_language.split(",")[:20]):
        match = _RANGE.match(entry)
        if match is None or match[1] == "*":
            continue
        try:
            weight = float(match[2]) if match[2] else 1.0
        except ValueError:
            continue
        if weight <= 0:
            continue
        parts = match[1].split("-")
        tag = parts[0].lower() + (
            f"_{parts[1].upper()}" if len(parts) > 1 and len(parts[1]) == 2 else ""
        )
        weighted.append((-weight, index, tag))
    return [tag for _w, _i, tag in sorted(weighted)]


def locale_of(language: str) -> Locale:
    """Babel's locale of ``language`` (English for one Babel does not know), for dates and
    numbers in its format."""
    try:
        return Locale.parse(language)
    except (ValueError, UnknownLocaleError):
        return Locale.parse(SOURCE_LANGUAGE)


@lru_cache(maxsize=16)
def edition_translations(language: str, catalog_dir: str | None) -> gettext.NullTranslations:
    """The translations an edition in ``language`` is written with: its subject and body
    (made once per process)."""
    return Languages(language=language, catalog_dir=catalog_dir).translations(language)


def edition_date(day: Date, language: str) -> str:
    """``day`` spelled out as an edition shows it in ``language``: "Saturday, November 28,
    2026", "sábado, 28 de noviembre de 2026"."""
    if language == SOURCE_LANGUAGE:
        return long_date(day)
    return format_date(day, format="full", locale=locale_of(language))


def language_words(language: str) -> str:
    """``language`` named in English, with its code: "Spanish (es)" (the code alone for one
    Babel does not know)."""
    try:
        name = Locale.parse(language).get_display_name("en")
    except (ValueError, UnknownLocaleError):
        return language
    return f"{name} ({language})" if name else language
