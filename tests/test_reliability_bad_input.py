"""Reliability, bad input (issue 10): schemathesis over the Newsletter API's OpenAPI document
with several thousand generated cases — no 500, no answer outside the document.

The default run keeps ``test_openapi.py``'s modest 25 cases per operation; this long variant
(``--run-slow``) runs 700 per operation (4,900 over the document's seven operations). Property
tests over the list-source and export query strings live in ``test_listsource_properties.py``
and ``test_export_properties.py`` (150 examples per property on every run).
"""

from __future__ import annotations

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

from newsletter_connector.web.openapi import build_document

schema = schemathesis.openapi.from_dict(build_document())
CASES_PER_OPERATION = 700


def test_the_long_variant_covers_several_thousand_cases() -> None:
    operations = sum(
        method in ("get", "post", "put", "patch", "delete")
        for item in build_document()["paths"].values()
        for method in item
    )
    assert operations * CASES_PER_OPERATION >= 4000


@pytest.mark.slow
@schema.parametrize()
@settings(
    max_examples=CASES_PER_OPERATION,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_api_conforms_to_its_document_over_thousands_of_cases(
    case: Any, newsletter_app: Any, auth: dict[str, str]
) -> None:
    case.call_and_validate(
        app=newsletter_app,
        headers=auth,
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_headers_conformance,
            response_schema_conformance,
        ],
    )
