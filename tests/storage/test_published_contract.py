"""The published contract, what a third party may implement, is exactly the protocols of
``newsletter_connector.storage`` (read from the code), no more than 20 members in all, and
docs/plugins.md shows the same list."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import newsletter_connector.storage
from tests.support.paths import ROOT

pytestmark = pytest.mark.database_independent

#: Protocol -> its members: what a storage backend, a subscriber store's batches and an
#: outbound transport implement. Everything else is the built-in store's concrete classes.
EXPECTED = {
    "SubscriberRepository": (
        "add",
        "get_by_email",
        "get_by_token",
        "save",
        "delete",
        "list_page",
        "find_by_prefix",
        "scan",
        "tally",
        "count",
        "changes_per_day",
        "mark_announced",
    ),
    "SubscriberBatches": ("get_many_by_email", "add_many"),
    "Transport": ("max_batch_size", "max_requests_per_batch", "deliver"),
}
MOST_MEMBERS = 20


def published_protocols() -> dict[str, tuple[type, tuple[str, ...]]]:
    """Every public protocol defined in a module of ``newsletter_connector.storage`` (a private
    one only types what a helper reads, and nobody implements it), with its module and its
    public members (declared attributes, then methods), in source order."""
    found: dict[str, tuple[type, tuple[str, ...]]] = {}
    package = newsletter_connector.storage
    for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            if (
                inspect.isclass(cls)
                and cls.__module__ == module.__name__
                and getattr(cls, "_is_protocol", False)
                and not cls.__name__.startswith("_")
            ):
                attributes = list(inspect.get_annotations(cls))
                methods = [
                    name
                    for name, member in vars(cls).items()
                    if callable(member) and not name.startswith("_")
                ]
                found[cls.__name__] = (cls, tuple(attributes + methods))
    return found


def contract_table() -> str:
    """The contract as docs/plugins.md shows it."""
    protocols = published_protocols()
    rows = [
        "| Protocol | Module | Members |",
        "|---|---|---|",
        *(
            f"| `{name}` | `{cls.__module__}` | "
            + ", ".join(f"`{member}`" for member in members)
            + " |"
            for name, (cls, members) in protocols.items()
        ),
    ]
    total = sum(len(members) for _cls, members in protocols.values())
    return "\n".join(rows) + f"\n\n**{total} members in all.**\n"


def test_the_published_contract_is_the_expected_list() -> None:
    found = {name: members for name, (_cls, members) in published_protocols().items()}
    assert found == EXPECTED


def test_a_third_party_implements_at_most_20_members() -> None:
    assert sum(len(members) for members in EXPECTED.values()) <= MOST_MEMBERS


def test_the_plugin_guide_shows_the_same_list() -> None:
    guide = (ROOT / "docs" / "plugins.md").read_text()
    assert contract_table() in guide, f"docs/plugins.md should show:\n{contract_table()}"
