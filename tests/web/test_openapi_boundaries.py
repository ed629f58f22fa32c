"""Schemathesis's boundary cases against both OpenAPI documents, the Newsletter API's and the
Connector's: for every operation, each parameter's and body field's edges, valid and invalid
(its coverage phase), and the documents' own examples. No 500, no answer outside the document.

Schemathesis makes these cases when the module is collected, which costs tens of seconds, so
they run in the system tier; the quick tier's ``test_openapi.py`` and
``test_openapi_connector.py`` send generated cases to the same operations with the same checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis

from newsletter_connector.web.openapi import build_document
from newsletter_connector.web.openapi.connector import build_connector_document
from tests.support.openapi_checks import BOUNDARIES_ONLY, CHECKS

pytestmark = pytest.mark.system

newsletter_api = schemathesis.openapi.from_dict(build_document())
connector = schemathesis.openapi.from_dict(build_connector_document())
#: Boundary cases every operation gets at least (the fewest, a GET with one query parameter,
#: gets nine).
FEWEST_CASES = 5


@pytest.fixture
def sent() -> Iterator[list[Any]]:
    """The cases one operation's test sent; afterwards, that there were boundary cases at all
    (an explicit phase without them would pass having sent nothing)."""
    cases: list[Any] = []
    yield cases
    assert len(cases) >= FEWEST_CASES, cases


@newsletter_api.parametrize()
@BOUNDARIES_ONLY
def test_api_answers_its_boundary_cases_as_documented(
    case: Any, newsletter_app: Any, auth: dict[str, str], sent: list[Any]
) -> None:
    case.call_and_validate(app=newsletter_app, headers=auth, checks=CHECKS)
    sent.append(case)


@connector.parametrize()
@BOUNDARIES_ONLY
def test_connector_answers_its_boundary_cases_as_documented(
    case: Any, newsletter_app: Any, token_headers: dict[str, str], sent: list[Any]
) -> None:
    case.call_and_validate(app=newsletter_app, headers=token_headers, checks=CHECKS)
    sent.append(case)
