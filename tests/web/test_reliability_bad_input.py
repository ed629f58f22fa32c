"""Reliability, bad input: schemathesis over the Newsletter API's OpenAPI document
with several thousand generated cases — no 500, no answer outside the document.

Every run sends 500 cases per operation (4,500 over the document's nine operations; about 35 s
here); the long variant (``--run-slow``) sends 3,000 per operation. A module-level tally checks
that the cases really ran. Property tests over the list-source and export query strings live in
``test_listsource_properties.py`` and ``test_export_properties.py`` (150 examples per property
in CI and with ``--all``, a quarter of them in the quick tier).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import settings

from newsletter_connector.web.openapi import build_document
from tests.support.openapi_checks import CHECKS, GENERATED_PHASES, UNTIMED

pytestmark = pytest.mark.system

schema = schemathesis.openapi.from_dict(build_document())
CASES_PER_OPERATION = 500
LONG_CASES_PER_OPERATION = 3_000
OPERATIONS = sum(
    method in ("get", "post", "put", "patch", "delete")
    for item in build_document()["paths"].values()
    for method in item
)
#: Generated cases only: the boundary cases are ``test_openapi_boundaries.py``'s.
SETTINGS: dict[str, Any] = {"phases": GENERATED_PHASES, **UNTIMED}

#: Cases sent per operation by the default run, filled in as they run.
_sent: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def several_thousand_cases_ran(request: pytest.FixtureRequest) -> Iterator[None]:
    """After the module: when every operation was tested, each was sent its full share, several
    thousand cases in all (hypothesis stops early on a space it has exhausted; this shows it)."""
    yield
    if len(_sent) == OPERATIONS:
        assert min(_sent.values()) >= CASES_PER_OPERATION, dict(_sent)
        assert sum(_sent.values()) >= 4_000, dict(_sent)


@schema.parametrize()
@settings(max_examples=CASES_PER_OPERATION, **SETTINGS)
def test_api_conforms_to_its_document_over_thousands_of_cases(
    case: Any, newsletter_app: Any, auth: dict[str, str]
) -> None:
    case.call_and_validate(app=newsletter_app, headers=auth, checks=CHECKS)
    _sent[f"{case.operation.method.upper()} {case.operation.path}"] += 1


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=LONG_CASES_PER_OPERATION, **SETTINGS)
def test_api_conforms_to_its_document_over_the_long_run(
    case: Any, newsletter_app: Any, auth: dict[str, str]
) -> None:
    case.call_and_validate(app=newsletter_app, headers=auth, checks=CHECKS)
