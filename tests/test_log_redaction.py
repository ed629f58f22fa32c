"""Access logs never carry link tokens or query strings."""

from __future__ import annotations

import pytest

from newsletter_connector.log_redaction import redact_path


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/confirm/abcDEF123_-", "/confirm/[redacted]"),
        ("/newsletter/unsubscribe/tok?x=1", "/newsletter/unsubscribe/[redacted]"),
        ("/profile/tok/extra", "/profile/[redacted]/extra"),
        ("/api/newsletter/v1/subscribers?cursor=abc", "/api/newsletter/v1/subscribers"),
        ("/signup", "/signup"),
        ("/confirmation/page", "/confirmation/page"),
    ],
)
def test_redact_path(path: str, expected: str) -> None:
    assert redact_path(path) == expected
