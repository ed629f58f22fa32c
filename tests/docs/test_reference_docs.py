"""The generated reference pages in docs/ are current (regenerate with
``python -m tests.support.reference_pages docs``)."""

from __future__ import annotations

import re

import pytest

from newsletter_connector.settings import Settings
from tests.support.paths import ROOT
from tests.support.reference_pages import PAGES, _markdown_roles

# Reads every documentation page
pytestmark = [pytest.mark.system, pytest.mark.database_independent]

DOCS = ROOT / "docs"


@pytest.mark.parametrize("filename", sorted(PAGES))
def test_generated_page_is_current(filename: str) -> None:
    committed = (DOCS / filename).read_text()
    assert committed == PAGES[filename](), (
        f"docs/{filename} is stale: run `python -m tests.support.reference_pages docs`"
    )


def test_every_setting_is_described() -> None:
    for name, field in Settings.model_fields.items():
        assert field.description, f"setting {name} has no description"


@pytest.mark.parametrize("filename", sorted(PAGES))
def test_generated_page_has_no_raw_sphinx_roles(filename: str) -> None:
    raw = re.findall(r":(?:class|meth|func|mod|attr|data|exc):`[^`]*`", PAGES[filename]())
    assert not raw, f"docs/{filename} shows Sphinx markup: {raw}"


@pytest.mark.parametrize("filename", sorted(PAGES))
def test_every_reference_link_lands_on_a_heading_that_exists(filename: str) -> None:
    links = re.findall(r"\]\(([\w-]*\.md)?#([\w-]+)\)", PAGES[filename]())
    for page, anchor in links:
        target = PAGES[page or filename]()
        assert f"{{#{anchor}}}" in target, f"docs/{filename} links to a missing {page}#{anchor}"


def test_hooks_page_links_the_descriptors_its_hooks_return() -> None:
    hooks = PAGES["hooks.md"]()
    for name in ("SubscriberStore", "IssueRenderer", "OutboundTransport"):
        assert f"a list of [`{name}`](#{name.lower()})" in hooks
        assert f"### `{name}` {{#{name.lower()}}}" in hooks
    # A descriptor's docstring links the published protocol on its own page.
    assert "returns the\n[`SubscriberRepository`](storage.md#subscriberrepository)" in hooks


@pytest.mark.parametrize(
    ("markup", "page", "markdown"),
    [
        (
            ":class:`~newsletter_connector.descriptors.SubscriberStore`",
            "hooks.md",
            "[`SubscriberStore`](#subscriberstore)",
        ),
        (
            ":class:`~.storage.host.SubscriberRepository`",
            "hooks.md",
            "[`SubscriberRepository`](storage.md#subscriberrepository)",
        ),
        (
            ":meth:`SubscriberRepository.list_page`",
            "storage.md",
            "[`SubscriberRepository.list_page`](#subscriberrepository-list-page)",
        ),
        (":func:`~.host_sql.prefix_range`", "storage.md", "[`prefix_range`](#prefix-range)"),
        (":mod:`.records`", "hooks.md", "[`records`](storage.md#records)"),
        (
            ":mod:`newsletter_connector.storage`",
            "storage.md",
            "[`newsletter_connector.storage`](storage.md)",
        ),
        (":class:`~newsletter_connector.errors.NotMigrated`", "storage.md", "`NotMigrated`"),
        (":attr:`payload`", "storage.md", "`payload`"),
    ],
)
def test_roles_become_links_to_where_the_object_is_documented(
    markup: str, page: str, markdown: str
) -> None:
    assert _markdown_roles(f"see {markup}.", page) == f"see {markdown}."
