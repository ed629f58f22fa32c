"""What every reader page shares: host template overrides, autoescaping, the stylesheet,
safety headers, labels on every field, no scripts, and the values the forms offer."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import falcon.testing
import pytest

from newsletter_connector import create_app
from newsletter_connector.model import contact as contact_model
from newsletter_connector.service import NewsletterService
from newsletter_connector.settings import SettingsError
from newsletter_connector.web.pages import choices
from newsletter_connector.web.pages.rendering import SECURITY_HEADERS
from tests.support.docblocks import docblock
from tests.support.pages_helpers import LabelAudit, path_of, text_of


def _client(settings: Any, storage: Any, **changes: Any) -> Any:
    service = NewsletterService.build(settings.model_copy(update=changes), storage=storage)
    return falcon.testing.TestClient(create_app(service=service))


@pytest.fixture
def reader(newsletter_service: Any) -> dict[str, Any]:
    record = newsletter_service.subscribers.subscribe({"email": "r@example.org"}).record
    return dict(newsletter_service.subscribers.contact(record))


def _every_page(reader: dict[str, Any]) -> list[str]:
    return [
        "/signup",
        "/signup/thanks",
        "/contact",
        "/contact/thanks",
        path_of(reader["unsubscribe_url"]),
        path_of(reader["profile_url"]),
        path_of(reader["confirm_url"]),  # confirms: keep it last
        "/confirm/" + "n" * 32,
    ]


def test_every_page_is_labelled_safe_and_script_free(
    newsletter_client: Any, reader: dict[str, Any]
) -> None:
    for path in _every_page(reader):
        page = newsletter_client.simulate_get(path)
        assert page.status_code in (200, 404), path
        html = page.text
        assert html.startswith("<!doctype html>") and '<html lang="en">' in html
        assert "<script" not in html.lower()
        assert not re.search(r"\son[a-z]+=", html), f"inline event handler on {path}"
        for name, value in SECURITY_HEADERS.items():
            assert page.headers[name.lower()] == value, (path, name)
        audit = LabelAudit()
        audit.feed(html)
        assert len(audit.ids) == len(set(audit.ids)), f"duplicate ids on {path}"
        for control in audit.controls:
            assert control.get("id") in audit.label_for, (path, control)
        assert 'id="main"' in html and 'href="#main"' in html  # skip link


def test_csp_allows_no_script_at_all() -> None:
    csp = SECURITY_HEADERS["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert "form-action 'self'" in csp and "frame-ancestors 'none'" in csp


def test_site_name_and_links_come_from_settings_escaped(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    client = _client(
        newsletter_settings,
        newsletter_storage,
        site_name="Tom & Jerry's <News>",
        site_url="https://home.example.test",
    )
    html = client.simulate_get("/signup").text
    assert "Tom &amp; Jerry&#39;s &lt;News&gt;" in html and "<News>" not in html
    assert 'href="https://home.example.test"' in html
    assert 'href="https://news.example.test/newsletter/assets/reader.css"' in html
    assert 'href="https://news.example.test/newsletter/contact"' in html


def test_stylesheet_is_served_with_large_text(newsletter_client: Any) -> None:
    css = newsletter_client.simulate_get("/assets/reader.css")
    assert css.status_code == 200
    assert css.headers["content-type"] == "text/css; charset=utf-8"
    assert "font-size: 125%" in css.text  # 20px base text
    assert ":focus-visible" in css.text and ".nl-hp { display: none" in css.text


def test_host_templates_and_stylesheet_override_the_built_ins(
    newsletter_settings: Any, newsletter_storage: Any, tmp_path: Path
) -> None:
    (tmp_path / "base.html").write_text(
        "<!doctype html><html lang=en><title>{% block title %}{% endblock %}</title>"
        "<body><p>HOST LAYOUT {{ site_name }}</p>{% block content %}{% endblock %}</body></html>"
    )
    (tmp_path / "contact_done.html").write_text(
        '{% extends "base.html" %}{% block content %}<h1>Thanks, {{ "<friend>" }}</h1>'
        "{% endblock %}"
    )
    (tmp_path / "reader.css").write_text("body { color: black; }")
    client = _client(newsletter_settings, newsletter_storage, template_dir=str(tmp_path))
    signup = client.simulate_get("/signup").text
    assert "HOST LAYOUT Test News" in signup and "Sign up for our newsletter" in signup
    done = client.simulate_get("/contact/thanks").text
    assert "HOST LAYOUT" in done and "Thanks, &lt;friend&gt;" in done  # autoescaped
    assert client.simulate_get("/assets/reader.css").text == "body { color: black; }"


def test_a_missing_template_folder_fails_at_start_naming_the_setting(
    newsletter_settings: Any, newsletter_storage: Any, tmp_path: Path
) -> None:
    with pytest.raises(SettingsError, match=r"template_dir \(NEWSLETTER_TEMPLATE_DIR\)"):
        _client(newsletter_settings, newsletter_storage, template_dir=str(tmp_path / "nope"))


def test_unknown_page_paths_answer_an_html_404(newsletter_client: Any) -> None:
    for path in ("/confirm", "/confirm/", "/unsubscribe/a/b", "/profile", "/nothing"):
        result = newsletter_client.simulate_get(path)
        assert result.status_code == 404, path
        assert result.headers["content-type"].startswith("text/html")


def test_form_choices_cover_exactly_the_contact_values() -> None:
    assert {value for value, _ in choices.CADENCES} == set(contact_model.CADENCES)
    assert [value for value, _ in choices.CATEGORIES] == list(contact_model.CATEGORIES)
    assert [v for v, _ in choices.AGE_RANGES if v] == list(contact_model.AGE_RANGES)
    assert [v for v, _ in choices.GENDERS if v] == list(contact_model.GENDERS)
    assert [(t.wire, t.attr) for t in choices.TOPICS] == list(contact_model.EMAIL_PREF_FIELDS)
    assert {value for value, _ in choices.SIGNUP_FREQUENCIES} <= set(contact_model.CADENCES)


def test_the_not_found_page_helps_the_reader_on(newsletter_client: Any) -> None:
    page = newsletter_client.simulate_get("/profile/" + "p" * 40)
    assert page.status_code == 404
    text = text_of(page.text)
    assert "sign up for the newsletter" in text and "contact us" in text


def test_documented_base_html_works_for_every_page(
    newsletter_settings: Any, newsletter_storage: Any, newsletter_service: Any, tmp_path: Path
) -> None:
    (tmp_path / "base.html").write_text(docblock("reader-pages-base-html"))
    client = _client(newsletter_settings, newsletter_storage, template_dir=str(tmp_path))
    record = newsletter_service.subscribers.subscribe({"email": "doc@example.org"}).record
    for path in _every_page(dict(newsletter_service.subscribers.contact(record))):
        page = client.simulate_get(path)
        assert page.status_code in (200, 404), path
        assert '<main id="main">' in page.text and "Test News" in page.text


def test_documented_one_click_headers_are_what_the_page_accepts(
    newsletter_client: Any, newsletter_service: Any
) -> None:
    record = newsletter_service.subscribers.subscribe({"email": "hdr@example.org"}).record
    token = record.unsubscribe_token
    headers = dict(
        line.split(": ", 1) for line in docblock("reader-pages-one-click-headers").splitlines()
    )
    url = headers["List-Unsubscribe"].strip("<>").replace("TOKEN", token)
    url = url.replace("https://example.org/newsletter", "https://news.example.test/newsletter")
    result = newsletter_client.simulate_post(
        path_of(url),
        body=headers["List-Unsubscribe-Post"],
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert result.status_code == 200
    assert newsletter_service.subscribers.get("hdr@example.org").status == "unsubscribed"
