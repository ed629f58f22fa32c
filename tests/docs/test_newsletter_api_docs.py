"""Every curl example in docs/newsletter-api.md runs, in order, and answers as documented."""

from __future__ import annotations

import re
import shlex
from typing import Any

from tests.support.docblocks import parse
from tests.support.paths import ROOT

DOC = ROOT / "docs" / "newsletter-api.md"
API = "/api/newsletter/v1"


def examples() -> list[tuple[list[str], int, str | None]]:
    """The page's curl examples (the "newsletter-api-curl" block family), in page order."""
    blocks = [
        block.code
        for block in parse(DOC)
        if block.name and block.name.startswith("newsletter-api-curl" + ":")
    ]
    found = []
    for block in blocks:
        expect = re.search(r"^# → (\d{3})(?: (\w+))?$", block, flags=re.M)
        if not expect or "curl" not in block:
            continue
        command = block[: expect.start()].replace("\\\n", " ")
        found.append((shlex.split(command), int(expect.group(1)), expect.group(2)))
    return found


def run(client: Any, argv: list[str], key: str) -> Any:
    assert argv[0] == "curl"
    method, url, headers, body = "GET", None, {}, None
    args = iter(argv[1:])
    for arg in args:
        if arg in ("-sS", "-s", "-i"):
            continue
        if arg == "-X":
            method = next(args)
        elif arg == "-H":
            name, _, value = next(args).partition(": ")
            headers[name] = value.replace("$KEY", key)
        elif arg == "-d":
            body = next(args)
        else:
            url = arg
    assert url is not None and url.startswith("$API/")
    path, _, query = url.replace("$API", API).partition("?")
    return client.simulate_request(method, path, headers=headers, body=body, query_string=query)


def test_every_example_answers_as_documented(
    newsletter_client: Any, newsletter_service: Any, api_key: str
) -> None:
    newsletter_service.admin.create_api_key("platform")
    newsletter_service.messages.record("visitor@example.org", None, "Could you cover hearing aids?")
    cases = examples()
    assert len(cases) >= 25
    for argv, status, error in cases:
        result = run(newsletter_client, argv, api_key)
        assert result.status_code == status, (argv, result.text)
        if error:
            assert result.json["error"] == error, argv


def test_every_endpoint_and_error_code_is_documented() -> None:
    text = DOC.read_text()
    for needle in (
        "GET /status",
        "POST /subscribers",
        "GET /subscribers/{email}",
        "GET /subscribers`",
        "PATCH /subscribers/{email}",
        "DELETE /subscribers/{email}",
        "GET /contact-messages",
    ):
        assert needle in text, needle
    for code in ("unauthorized", "invalid_request", "consent_required", "not_found"):
        assert "# → 4" in text and re.search(rf"# → \d{{3}} {code}", text), code
    assert "db_unavailable" in text
