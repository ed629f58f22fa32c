"""The OpenAPI document: served, kept in docs/, and true to the implementation (schemathesis's
generated cases; its boundary cases run in ``test_openapi_boundaries.py``, system tier)."""

from __future__ import annotations

import json
from typing import Any

import schemathesis

from newsletter_connector import create_app
from newsletter_connector.plugins.sql_store import migrate
from newsletter_connector.web.openapi import FRAGMENTS, build_document, served_document
from tests.support.openapi_checks import CHECKS, GENERATED_ONLY
from tests.support.paths import ROOT

DOCS_COPY = ROOT / "docs" / "openapi.json"
OPENAPI = "/api/newsletter/v1/openapi.json"

schema = schemathesis.openapi.from_dict(build_document())


def test_document_is_served_without_a_key(newsletter_client: Any) -> None:
    result = newsletter_client.simulate_get(OPENAPI)
    assert result.status_code == 200
    assert result.json == build_document()
    assert result.json["openapi"].startswith("3.1")


def test_apps_share_the_document_and_head_revision_read_once(newsletter_service: Any) -> None:
    apps = [create_app(service=newsletter_service) for _ in range(2)]
    documents = [app._router.find(OPENAPI)[0].document for app in apps]
    assert documents[0] is documents[1] is served_document()
    assert served_document() == build_document()
    assert migrate.head_revision.cache_info().misses == 1  # parsed once for the whole process


def test_docs_copy_equals_the_served_document(newsletter_client: Any) -> None:
    served = newsletter_client.simulate_get(OPENAPI).json
    assert DOCS_COPY.exists(), "write it with: python -m newsletter_connector.web.openapi"
    assert json.loads(DOCS_COPY.read_text()) == served, (
        "docs/openapi.json is stale; regenerate it with: "
        ".venv/bin/python -m newsletter_connector.web.openapi > docs/openapi.json"
    )


def test_every_route_of_the_api_is_documented(newsletter_app: Any) -> None:
    document = build_document()
    assert set(document["paths"]) >= {
        "/status",
        "/subscribers",
        "/subscribers/{email}",
        "/contact-messages",
    }
    assert FRAGMENTS[:3] == ("status", "subscribers", "contact_messages")


@schema.parametrize()
@GENERATED_ONLY
def test_api_conforms_to_its_document(case: Any, newsletter_app: Any, auth: dict[str, str]) -> None:
    case.call_and_validate(
        app=newsletter_app,
        headers=auth,
        checks=CHECKS,
    )
