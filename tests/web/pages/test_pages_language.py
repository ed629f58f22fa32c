"""Reader pages in the reader's language: every page in Spanish says ``lang="es"`` and leaves
no English sentence; the catalogs are complete, current with the sources and compiled as
shipped; a reader's browser picks among the installed languages when the site says so; a site
adds a language of its own in ``catalog_dir``; a bad setting is refused by name."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import falcon.testing
import pytest
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from newsletter_connector import create_app
from newsletter_connector.i18n import LOCALE_DIR
from newsletter_connector.settings import SettingsError
from tests.support.pages_helpers import open_form, path_of, text_of
from tests.support.paths import ROOT

SPANISH_PO = LOCALE_DIR / "es" / "LC_MESSAGES" / "messages.po"
SPANISH_MO = LOCALE_DIR / "es" / "LC_MESSAGES" / "messages.mo"
TEMPLATE = LOCALE_DIR / "messages.pot"
#: Words the same in both languages, or names: never a sign of English left behind.
_SHARED = {"Error:", "Error"}


def _catalog(path: Path) -> Any:
    with path.open("rb") as handle:
        return read_po(handle)


def english_sentences() -> list[str]:
    """Every message of the template as visible text (placeholders and markup taken out), of
    at least two words: what must not be seen on a Spanish page."""
    sentences = []
    for message in _catalog(TEMPLATE):
        for text in message.id if isinstance(message.id, tuple) else (message.id,):
            if not text:
                continue
            visible = re.sub(r"%\([a-z]+\)[sd]|<[^>]+>", "|", text)
            sentences += [part.strip() for part in visible.split("|") if " " in part.strip()]
    return [sentence for sentence in sentences if sentence not in _SHARED]


@pytest.fixture
def spanish(newsletter_settings: Any, newsletter_storage: Any) -> Any:
    settings = newsletter_settings.model_copy(update={"language": "es"})
    from newsletter_connector.service import NewsletterService

    service = NewsletterService.build(settings, storage=newsletter_storage)
    return falcon.testing.TestClient(create_app(service=service)), service


def _pages(client: Any, service: Any) -> dict[str, Any]:
    """Every reader page, in each state a reader meets it."""
    pages: dict[str, Any] = {"signup": client.simulate_get("/signup")}
    form = open_form(client, "/signup")
    pages["signup-error"] = form.post(client, "/signup", {"email": "x", "zip": "1"})
    pages["signup-expired"] = form.post(
        client, "/signup", {"email": "a@example.org"}, with_token=False
    )
    pages["signup-done"] = client.simulate_get("/signup/thanks")
    pages["contact"] = client.simulate_get("/contact")
    contact = open_form(client, "/contact")
    pages["contact-error"] = contact.post(client, "/contact", {"email": "a@example.org"})
    pages["contact-done"] = client.simulate_get("/contact/thanks")
    pages["cross-site"] = client.simulate_post(
        "/contact",
        body="email=a%40example.org",
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Sec-Fetch-Site": "cross-site",
        },
    )
    pages["bad-form"] = client.simulate_post(
        "/contact", body="{}", headers={"Content-Type": "application/json"}
    )
    pending = service.subscribers.subscribe({"email": "ana@example.org"}).record
    links = service.subscribers.contact(pending)
    pages["profile-pending"] = client.simulate_get(path_of(links["profile_url"]))
    profile = open_form(client, path_of(links["profile_url"]))
    pages["profile-error"] = profile.post(
        client,
        path_of(links["profile_url"]),
        {"zip": "12", "sms": "yes", "cadence_briefings": "daily"},
    )
    pages["confirm-ask"] = client.simulate_get(
        path_of(links["confirm_url"]), headers={"Sec-Purpose": "prefetch"}
    )
    pages["confirm"] = client.simulate_get(path_of(links["confirm_url"]))
    pages["confirm-already"] = client.simulate_get(path_of(links["confirm_url"]))
    pages["unsubscribe"] = client.simulate_get(path_of(links["unsubscribe_url"]))
    leave = open_form(client, path_of(links["unsubscribe_url"]))
    pages["unsubscribe-done"] = leave.post(client, path_of(links["unsubscribe_url"]), {})
    pages["unsubscribe-already"] = client.simulate_get(path_of(links["unsubscribe_url"]))
    pages["confirm-inactive"] = client.simulate_get(path_of(links["confirm_url"]))
    pages["profile-unsubscribed"] = client.simulate_get(path_of(links["profile_url"]))
    pages["not-found"] = client.simulate_get("/profile/" + "x" * 32)
    pages["unknown-address"] = client.simulate_get("/no-such-page")
    other = service.subscribers.subscribe({"email": "bea@example.org"}).record
    pages["one-click"] = client.simulate_post(
        path_of(service.subscribers.contact(other)["unsubscribe_url"]),
        body="List-Unsubscribe=One-Click",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    return pages


def test_every_reader_page_in_spanish_says_so_and_leaves_no_english(spanish: Any) -> None:
    client, service = spanish
    english = english_sentences()
    assert len(english) > 100  # the template holds the pages' sentences
    pages = _pages(client, service)
    assert pages["one-click"].status_code == 200 and pages["unknown-address"].status_code == 404
    for name, page in pages.items():
        if page.status_code == 303:
            continue
        assert 'lang="es"' in page.text, name
        assert page.headers["content-language"] == "es", name
        shown = text_of(page.text)
        left = [sentence for sentence in english if sentence in shown]
        assert not left, (name, left)


def test_the_spanish_pages_speak_spanish(spanish: Any) -> None:
    client, _service = spanish
    signup = text_of(client.simulate_get("/signup").text)
    assert "boletín" in signup and "correo electrónico" in signup
    assert "Diario" in signup or "diario" in signup.lower()
    # The API's values stay as they are: the form still posts them.
    assert 'value="daily"' in client.simulate_get("/signup").text


def test_the_spanish_catalog_is_complete_and_checked() -> None:
    catalog = _catalog(SPANISH_PO)
    template_ids = {m.id for m in _catalog(TEMPLATE) if m.id}
    spanish_ids = {m.id for m in catalog if m.id}
    assert spanish_ids == template_ids
    untranslated = [
        m.id
        for m in catalog
        if m.id and (m.fuzzy or not all(m.string if isinstance(m.string, tuple) else [m.string]))
    ]
    assert untranslated == []
    problems = [(message.id, errors) for message, errors in catalog.check()]
    assert problems == []


def test_the_template_holds_every_message_of_the_sources(tmp_path: Path) -> None:
    extracted = tmp_path / "messages.pot"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "babel.messages.frontend",
            "extract",
            "-F",
            str(LOCALE_DIR / "babel.cfg"),
            "-k",
            "N_",
            "--sort-output",
            "--no-location",
            "-o",
            str(extracted),
            ".",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    assert {m.id for m in _catalog(extracted)} == {m.id for m in _catalog(TEMPLATE)}, (
        "run the catalog commands of docs/contributing/development.md, Translations"
    )


def test_the_shipped_catalog_is_the_compiled_po() -> None:
    compiled = io.BytesIO()
    write_mo(compiled, _catalog(SPANISH_PO))
    assert SPANISH_MO.read_bytes() == compiled.getvalue(), (
        "compile the catalogs: docs/contributing/development.md, Translations"
    )


@pytest.mark.parametrize(
    ("accept", "shown"),
    [
        ("es-MX,es;q=0.9,en;q=0.8", "es"),
        ("fr-CA, es;q=0.5", "es"),
        ("en-US,en;q=0.9,es;q=0.8", "en"),
        ("fr", "en"),
        ("es;q=0", "en"),
        ("*", "en"),
        ("", "en"),
    ],
)
def test_a_browser_picks_among_the_installed_languages_when_the_site_says_so(
    newsletter_settings: Any, newsletter_storage: Any, accept: str, shown: str
) -> None:
    from newsletter_connector.service import NewsletterService

    settings = newsletter_settings.model_copy(update={"language_from_browser": True})
    service = NewsletterService.build(settings, storage=newsletter_storage)
    client = falcon.testing.TestClient(create_app(service=service))
    page = client.simulate_get("/signup", headers={"Accept-Language": accept})
    assert f'lang="{shown}"' in page.text
    assert page.headers["content-language"] == shown
    assert "Accept-Language" in page.headers["vary"]


def test_without_the_setting_the_browser_does_not_choose(newsletter_app: Any) -> None:
    client = falcon.testing.TestClient(newsletter_app)
    page = client.simulate_get("/signup", headers={"Accept-Language": "es"})
    assert 'lang="en"' in page.text and "Sign up for our newsletter" in page.text
    assert "vary" not in page.headers or "Accept-Language" not in page.headers["vary"]


def _third_catalog(folder: Path) -> None:
    """A small French catalog, as a site would add one: two messages."""
    from babel.messages.catalog import Catalog

    catalog = Catalog(locale="fr")
    catalog.add("Sign up for our newsletter", "Abonnez-vous à notre lettre")
    catalog.add("Sign up", "S\N{RIGHT SINGLE QUOTATION MARK}abonner")
    target = folder / "fr" / "LC_MESSAGES"
    target.mkdir(parents=True)
    with (target / "messages.mo").open("wb") as out:
        write_mo(out, catalog)


def test_a_site_adds_a_language_in_its_catalog_folder(
    newsletter_settings: Any, newsletter_storage: Any, tmp_path: Path
) -> None:
    from newsletter_connector.service import NewsletterService

    _third_catalog(tmp_path)
    settings = newsletter_settings.model_copy(
        update={"language": "fr", "catalog_dir": str(tmp_path)}
    )
    service = NewsletterService.build(settings, storage=newsletter_storage)
    page = falcon.testing.TestClient(create_app(service=service)).simulate_get("/signup")
    assert 'lang="fr"' in page.text and "Abonnez-vous à notre lettre" in page.text
    assert "S\N{RIGHT SINGLE QUOTATION MARK}abonner" in page.text
    assert "Your email address" in page.text  # what the site did not translate stays English


@pytest.mark.parametrize(
    ("update", "words"),
    [
        ({"language": "de"}, "'de' has no catalog; installed: en, es"),
        ({"catalog_dir": "/no/such/folder"}, "is not a folder"),
    ],
)
def test_a_language_without_a_catalog_is_refused_by_name(
    newsletter_settings: Any, newsletter_storage: Any, update: dict[str, Any], words: str
) -> None:
    from newsletter_connector.service import NewsletterService

    settings = newsletter_settings.model_copy(update=update)
    service = NewsletterService.build(settings, storage=newsletter_storage)
    with pytest.raises(SettingsError) as refused:
        create_app(service=service)
    assert words in str(refused.value)


def test_the_admin_dashboard_says_which_language_readers_see(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    from newsletter_connector.service import NewsletterService
    from tests.support.admin import PASSWORD, get_page, sign_in

    settings = newsletter_settings.model_copy(
        update={"language": "es", "language_from_browser": True}
    )
    service = NewsletterService.build(settings, storage=newsletter_storage)
    client = falcon.testing.TestClient(create_app(service=service))
    service.admin_access.create_user("ada", PASSWORD)
    page = get_page(client, "/admin", sign_in(client, "ada"))
    shown = text_of(page.text)
    assert "The reader pages and the editions' own words are in Spanish (es)." in shown
    assert "A reader's browser may pick English (en) instead." in shown
    assert 'lang="en"' in page.text  # the admin pages stay English
