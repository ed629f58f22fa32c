"""Every curl example in docs/newsletter-api.md runs, in order, and answers as documented."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from tests.support.docblocks import parse, same_shape
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
    newsletter_client: Any, newsletter_service: Any
) -> None:
    """The examples run in page order with the key the page makes ("platform"); each example
    answer shown after one has the real answer's fields and types (an error's code and message
    word for word, the status call's answer whole)."""
    key = newsletter_service.admin.create_api_key("platform").key
    newsletter_service.messages.record("visitor@example.org", None, "Could you cover hearing aids?")
    cases = dict(zip(curl_blocks(), examples(), strict=True))
    assert len(cases) >= 25
    last: Any = None
    shown = 0
    for block in parse(DOC):
        if block.name in cases:
            argv, status, error = cases[block.name]
            last = run(newsletter_client, argv, key)
            assert last.status_code == status, (argv, last.text)
            if error:
                assert last.json["error"] == error, argv
        elif block.name and block.name.startswith("newsletter-api-answer" + ":"):
            documented = json.loads(block.code)
            same_shape(documented, last.json, block.name)
            if "error" in documented or "ok" in documented:
                assert documented == last.json, block.name
            shown += 1
    assert shown == 10


def curl_blocks() -> list[str]:
    """The names of the blocks :func:`examples` reads, in the same order."""
    return [
        block.name
        for block in parse(DOC)
        if block.name
        and block.name.startswith("newsletter-api-curl:")
        and re.search(r"^# → \d{3}", block.code, flags=re.M)
        and "curl" in block.code
    ]


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
