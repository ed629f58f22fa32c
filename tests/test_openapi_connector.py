"""The Connector's OpenAPI document (export and feedback): kept in docs/, covering every
endpoint the export sink serves, and true to the implementation (schemathesis)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from newsletter_connector.web.export import ExportSink
from newsletter_connector.web.openapi.connector import build_connector_document

from .support.analytics_helpers import connect

DOCS_COPY = Path(__file__).resolve().parents[1] / "docs" / "openapi-connector.json"

schema = schemathesis.openapi.from_dict(build_connector_document())


@pytest.fixture
def token_headers(newsletter_service: Any) -> dict[str, str]:
    return connect(newsletter_service)


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
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_connector_conforms_to_its_document(
    case: Any, newsletter_app: Any, token_headers: dict[str, str]
) -> None:
    case.call_and_validate(
        app=newsletter_app,
        headers=token_headers,
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_headers_conformance,
            response_schema_conformance,
        ],
    )
