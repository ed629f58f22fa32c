"""What the schemathesis tests check on every answer, and the two ways they run.

Schemathesis makes its boundary cases (its coverage phase) for every operation when a test
module is collected, which costs tens of seconds: the other tests send generated cases only
(:data:`GENERATED_PHASES`), and ``test_openapi_boundaries.py`` (system tier) sends the
boundary cases and the documents' own examples (:data:`BOUNDARIES_ONLY`). The fixture
``token_headers`` is registered for every test module by ``tests/conftest.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.analytics_helpers import connect
from tests.support.examples import examples

#: No 500, and every answer as the document describes it.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]

#: Hypothesis settings every schemathesis test shares: no deadline (a case is a whole request),
#: and the app fixtures are function-scoped.
UNTIMED: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}

#: Every phase but the explicit one, which carries the boundary cases and examples (so
#: collecting a module generates nothing; ``test_openapi_boundaries.py`` sends those).
GENERATED_PHASES = [Phase.reuse, Phase.generate, Phase.target, Phase.shrink]

#: Generated cases, 25 per operation.
GENERATED_ONLY = settings(max_examples=examples(25), phases=GENERATED_PHASES, **UNTIMED)

#: The explicit phase alone: schemathesis's boundary cases and the documents' examples.
BOUNDARIES_ONLY = settings(phases=[Phase.explicit], **UNTIMED)


@pytest.fixture
def token_headers(newsletter_service: Any) -> dict[str, str]:
    """Headers carrying the export bearer token of a connected platform."""
    return connect(newsletter_service)
