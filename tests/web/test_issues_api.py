"""GET /issues/latest and GET /issues (docs/issues.md, "Reading issues") through create_app, checked
against the OpenAPI fragment's schemas."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest

from newsletter_connector.testing.issue_samples import sample_issue_content
from newsletter_connector.web.openapi import build_document
from newsletter_connector.web.openapi.issues import fragment

FRAGMENT = fragment()
DOCUMENT = build_document()

LATEST = "/api/newsletter/v1/issues/latest"
ISSUES = "/api/newsletter/v1/issues"
BODY_KEYS = {
    "id",
    "kind",
    "cadence",
    "date",
    "subject",
    "site_url",
    "postal_address",
    "sections",
}


def validator(name: str) -> Any:
    schema = {"$ref": f"#/components/schemas/{name}", "components": DOCUMENT["components"]}
    return jsonschema_rs.Draft202012Validator(schema)


def run(service: Any, kind: str = "manual", date: str = "2026-11-21", **over: Any) -> Any:
    return service.issues.run_digest(kind, date, sample_issue_content(**over))


def test_latest_before_any_issue_is_404(newsletter_client: Any, auth: dict[str, str]) -> None:
    result = newsletter_client.simulate_get(LATEST, headers=auth)
    assert result.status_code == 404
    assert result.json == {"error": "not_found", "message": "no issue has been built yet"}
    validator("Error").validate(result.json)


def test_latest_returns_the_newest_issue_with_html(
    newsletter_client: Any, newsletter_service: Any, auth: dict[str, str]
) -> None:
    run(newsletter_service, "daily", "2026-11-20")
    newest = run(newsletter_service, "weekly", "2026-11-16", subject="Week in review")
    result = newsletter_client.simulate_get(LATEST, headers=auth)
    assert result.status_code == 200
    body = result.json
    validator("IssueWithHtml").validate(body)
    assert set(body) == BODY_KEYS | {"html", "text"}
    assert body["id"] == str(newest.id)
    assert body["kind"] == "weekly" and body["cadence"] == "weekly"
    assert body["date"] == "2026-11-16"  # newest recorded, whatever its issue date
    assert body["subject"] == "Week in review"
    assert body["site_url"] == "https://news.example.test"
    assert body["postal_address"] == "1 Test Street, Testville, TS 00000"
    expected = sample_issue_content()
    assert body["sections"] == expected
    assert "{{unsubscribe_url}}" in body["html"] and "{{unsubscribe_url}}" in body["text"]
    assert body["html"] == newest.html


def test_list_is_newest_first_without_html(
    newsletter_client: Any, newsletter_service: Any, auth: dict[str, str]
) -> None:
    ids = [run(newsletter_service, kind).id for kind in ("daily", "weekly", "manual", "test")]
    result = newsletter_client.simulate_get(ISSUES, headers=auth)
    assert result.status_code == 200
    validator("IssueList").validate(result.json)
    assert set(result.json) == {"data"}
    data = result.json["data"]
    assert [d["id"] for d in data] == [str(i) for i in reversed(ids)]
    assert [d["kind"] for d in data] == ["test", "manual", "weekly", "daily"]
    for item in data:
        assert set(item) == BODY_KEYS
        assert item["sections"] == sample_issue_content()


def test_include_html_adds_the_bodies(
    newsletter_client: Any, newsletter_service: Any, auth: dict[str, str]
) -> None:
    records = [run(newsletter_service) for _ in range(2)]
    result = newsletter_client.simulate_get(ISSUES, params={"include": "html"}, headers=auth)
    assert result.status_code == 200
    validator("IssueList").validate(result.json)
    data = result.json["data"]
    for item, record in zip(data, reversed(records), strict=True):
        assert set(item) == BODY_KEYS | {"html", "text"}
        assert item["html"] == record.html and item["text"] == record.text


def test_empty_list_is_an_empty_envelope(newsletter_client: Any, auth: dict[str, str]) -> None:
    result = newsletter_client.simulate_get(ISSUES, headers=auth)
    assert result.status_code == 200
    assert result.json == {"data": []}


def test_limit_default_100_and_bounds(
    newsletter_client: Any, newsletter_service: Any, auth: dict[str, str]
) -> None:
    from newsletter_connector.storage.records import NewIssue

    # 501 issues stored directly (rendering each would only slow the test down).
    template = run(newsletter_service)
    with newsletter_service.storage.transaction() as uow:
        for n in range(500):
            uow.issues.add(
                NewIssue(
                    uuid=f"00000000-0000-4000-8000-{n:012d}",
                    kind="manual",
                    cadence="manual",
                    issue_date=template.issue_date,
                    subject=f"edition {n}",
                    site_url=template.site_url,
                    postal_address=template.postal_address,
                    sections=template.sections,
                    html=template.html or "",
                    text=template.text,
                    period_key=None,
                    created_at=template.created_at,
                )
            )
    default = newsletter_client.simulate_get(ISSUES, headers=auth).json["data"]
    assert len(default) == 100 and default[0]["subject"] == "edition 499"
    one = newsletter_client.simulate_get(ISSUES, params={"limit": "1"}, headers=auth).json["data"]
    assert [d["subject"] for d in one] == ["edition 499"]
    most = newsletter_client.simulate_get(ISSUES, params={"limit": "500"}, headers=auth)
    assert len(most.json["data"]) == 500
    assert most.json["data"][-1]["subject"] == "edition 0"


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=-1", "limit"),
        ("limit=ten", "limit"),
        ("limit=1.5", "limit"),
        ("limit=", "limit"),
        ("limit=1&limit=2", "limit"),
        ("include=text", "include"),
        ("include=HTML", "include"),
        ("include=html&include=html", "include"),
    ],
)
def test_bad_query_is_400_naming_the_parameter(
    newsletter_client: Any, newsletter_service: Any, auth: dict[str, str], query: str, field: str
) -> None:
    run(newsletter_service)
    result = newsletter_client.simulate_get(ISSUES, query_string=query, headers=auth)
    assert result.status_code == 400
    assert result.json["error"] == "invalid_request"
    assert field in result.json["message"]
    validator("Error").validate(result.json)


@pytest.mark.parametrize("path", [LATEST, ISSUES])
def test_api_key_is_required(newsletter_client: Any, newsletter_service: Any, path: str) -> None:
    run(newsletter_service)
    for headers in ({}, {"Authorization": "Bearer nlk_notakey"}):
        result = newsletter_client.simulate_get(path, headers=headers)
        assert result.status_code == 401
        assert result.json["error"] == "unauthorized"
        assert "sections" not in result.text


@pytest.mark.parametrize("path", [LATEST, ISSUES])
def test_write_verbs_are_405(newsletter_client: Any, auth: dict[str, str], path: str) -> None:
    result = newsletter_client.simulate_post(path, headers=auth, json={})
    assert result.status_code == 405
    assert result.json["error"] == "method_not_allowed"


def test_latest_serves_test_issues_too(
    newsletter_client: Any, newsletter_service: Any, auth: dict[str, str]
) -> None:
    record = run(newsletter_service, "test")
    body = newsletter_client.simulate_get(LATEST, headers=auth).json
    assert body["id"] == str(record.id) and body["kind"] == "test"
    assert body["subject"].startswith("[TEST] ")


def test_fragment_refs_resolve_and_paths_are_documented() -> None:
    import json

    text = json.dumps(FRAGMENT)
    schemas = DOCUMENT["components"]["schemas"]
    for name in {part.split('"')[0] for part in text.split("#/components/schemas/")[1:]}:
        assert name in schemas, name
    assert set(FRAGMENT["paths"]) == {"/issues/latest", "/issues"}
    latest = FRAGMENT["paths"]["/issues/latest"]["get"]["responses"]
    listing = FRAGMENT["paths"]["/issues"]["get"]["responses"]
    assert set(latest) == {"200", "401", "404", "503"}
    assert set(listing) == {"200", "400", "401", "503"}
    for name, schema in schemas.items():
        jsonschema_rs.meta.validate(schema)  # each is a valid JSON Schema
        validator(name)  # and its references resolve
