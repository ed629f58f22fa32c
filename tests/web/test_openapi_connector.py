"""The Connector's OpenAPI document (export and feedback): kept in docs/, covering every
endpoint the export sink serves, and true to the implementation (schemathesis's generated
cases; its boundary cases run in ``test_openapi_boundaries.py``, system tier)."""

from __future__ import annotations

import json
from typing import Any

import schemathesis

from newsletter_connector.web.export import ExportSink
from newsletter_connector.web.openapi.connector import build_connector_document
from tests.support.openapi_checks import CHECKS, GENERATED_ONLY
from tests.support.paths import ROOT

DOCS_COPY = ROOT / "docs" / "openapi-connector.json"

schema = schemathesis.openapi.from_dict(build_connector_document())


def test_docs_copy_equals_the_document() -> None:
    assert json.loads(DOCS_COPY.read_text()) == build_connector_document(), (
        "docs/openapi-connector.json is stale; regenerate it with: "
        ".venv/bin/python -m newsletter_connector.web.openapi connector "
        "> docs/openapi-connector.json"
    )


def test_every_endpoint_of_the_sink_is_documented_with_its_method(newsletter_service: Any) -> None:
    sink = ExportSink(newsletter_service, "/api/export")
    documented = {
        path: {method.upper() for method in operations}
        for path, operations in build_connector_document()["paths"].items()
    }
    served = {path: {method} for path, (method, _endpoint) in sink.endpoints.items()}
    assert documented == served


@schema.parametrize()
@GENERATED_ONLY
def test_connector_conforms_to_its_document(
    case: Any, newsletter_app: Any, token_headers: dict[str, str]
) -> None:
    case.call_and_validate(
        app=newsletter_app,
        headers=token_headers,
        checks=CHECKS,
    )
