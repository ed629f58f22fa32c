"""Log redaction takes time linear in what it is given: each redaction function on inputs of
64 KB built to make a backtracking pattern retry every start (long runs without ``@``, of
``%``, of ``/``, of token characters) finishes, and doubling the input at most about doubles
the time (a generous ratio: a quadratic step would give four)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from newsletter_connector.log_redaction import (
    format_atoms,
    redact_access_atoms,
    redact_emails,
    redact_message,
    redact_path,
    redact_text,
    redact_token_shapes,
    redact_tokens,
    redact_url,
)
from newsletter_connector.service.analytics_sanitize import looks_personal, redact_prop_text

#: Repeated units that each make some pattern try a long match from every start.
UNITS = {
    "no at sign": "a",
    "address characters with dots": "a.b",
    "percent run": "%",
    "percent four": "%4",
    "percent 25": "%25",
    "slashes": "/",
    "token segment slashes": "profile/",
    "token characters": "aB3-",
    "encoded token segment": "%2570rofile%252F",
    "question marks": "?",
    "api key prefix": "nlk_",
    "at sign runs": "@",
}
FUNCTIONS: dict[str, Callable[[str], Any]] = {
    "redact_emails": redact_emails,
    "redact_tokens": redact_tokens,
    "redact_token_shapes": redact_token_shapes,
    "redact_path": redact_path,
    "redact_url": redact_url,
    "redact_text": redact_text,
    "redact_message": redact_message,
    "analytics looks_personal": looks_personal,
    "analytics redact_prop_text": redact_prop_text,
}


def build(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def cost(function: Callable[[str], Any], text: str) -> float:
    """The least of three timings of ``function(text)``, in seconds of this process's CPU
    time: a loaded machine (CI runs its jobs side by side) stretches wall time, not this."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        function(text)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize("unit", list(UNITS.values()), ids=list(UNITS))
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_each_redaction_scales_linearly_on_adversarial_input(name: str, unit: str) -> None:
    function = FUNCTIONS[name]
    small = cost(function, build(unit, 32 * 1024))
    large = cost(function, build(unit, 64 * 1024))
    # 0.1 s of slack so that timer noise on millisecond runs cannot fail the ratio; a
    # quadratic step takes seconds here.
    assert large <= 3 * small + 0.1, (name, unit, small, large)
    assert large < 5, (name, unit, large)


def test_an_email_is_still_found_after_a_long_run_without_an_at_sign() -> None:
    text = build("a.", 64 * 1024) + " reader@example.org"
    assert redact_emails(text).endswith(" [redacted]")
    assert "reader" not in redact_text(text[-2000:])


def _atoms(headers: dict[str, str]) -> dict[str, Any]:
    atoms: dict[str, Any] = {"m": "GET", "U": "/healthz", "H": "HTTP/1.1", "s": "200"}
    atoms.update({f"{{{k}}}i": v for k, v in headers.items()})
    return atoms


def test_the_access_log_redacts_only_the_header_atoms_its_format_uses() -> None:
    headers = {f"x-filler-{i}": build("a", 8 * 1024) for i in range(100)}
    headers["x-team"] = "reader@example.org"
    used = format_atoms('%(r)s "%({x-team}i)s"')
    redacted = redact_access_atoms(_atoms(headers), used)
    assert redacted["{x-team}i"] == "[redacted]"
    assert not [key for key in redacted if key.startswith("{x-filler")]


def test_a_long_value_is_cut_before_it_is_read() -> None:
    value = build("a", 64 * 1024)
    assert len(redact_text(value)) <= 2048
    assert len(redact_path("/" + value)) <= 2048


def test_a_hundred_headers_of_8_kb_cost_little_in_the_access_log() -> None:
    headers = {f"x-filler-{i}": build("a.b", 8 * 1024) for i in range(100)}
    atoms = _atoms(headers) | {"f": build("a", 8 * 1024), "a": build("%", 8 * 1024)}
    every = frozenset(atoms)  # a format asking for every header
    start = time.perf_counter()
    redact_access_atoms(atoms, every)
    assert time.perf_counter() - start < 5


def test_the_real_logger_passes_only_its_formats_atoms() -> None:
    from gunicorn.config import Config

    from newsletter_connector.observability.gunicorn_logging import RedactingLogger

    config = Config()
    config.set("access_log_format", '%(r)s "%({x-team}i)s"')
    logger = RedactingLogger(config)
    request = SimpleNamespace(headers=[("X-Team", "reader@example.org"), ("X-Other", "b")])
    response = SimpleNamespace(status="200 OK", headers=[], sent=0)
    environ = {"REQUEST_METHOD": "GET", "RAW_URI": "/", "SERVER_PROTOCOL": "HTTP/1.1"}
    atoms = logger.atoms(response, request, environ, timedelta(seconds=0))
    assert atoms["{x-team}i"] == "[redacted]"
    assert "{x-other}i" not in atoms
