"""Digest runs (docs/issues.md, "What a run does"): one issue per run, every kind, content hook,
renderer, events."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import pytest
from sqlalchemy import func, select

from newsletter_connector.descriptors import IssueRenderer
from newsletter_connector.errors import InvalidRequest, PluginNotFound
from newsletter_connector.hookspecs import hookimpl
from newsletter_connector.model.issue import issue_object
from newsletter_connector.plugins.sql_store.tables import issues, outbox_events
from newsletter_connector.service import NewsletterService
from newsletter_connector.service.issues import IssueAlreadyRecorded
from newsletter_connector.testing.issue_samples import sample_issue_content

NOW = datetime(2026, 11, 21, 12, 30, 0)  # a Saturday


class ContentPlugin:
    """Feeds the sample content and records how it was asked."""

    def __init__(self, **overrides: Any) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.overrides = overrides

    @hookimpl
    def newsletter_issue_content(self, kind: str, date: str, settings: Any) -> dict[str, Any]:
        self.calls.append((kind, date, settings))
        return sample_issue_content(**self.overrides)


def build(settings: Any, storage: Any, *plugins: Any, **changes: Any) -> NewsletterService:
    if changes:
        settings = settings.model_copy(update=changes)
    return NewsletterService.build(
        settings, storage=storage, plugins=list(plugins), clock=lambda: NOW
    )


def outbox(service: NewsletterService) -> list[Any]:
    with service.storage.transaction(write=False) as uow:
        connection = uow.connection  # type: ignore[attr-defined]
        return list(
            connection.execute(select(outbox_events).order_by(outbox_events.c.seq)).mappings()
        )


def issue_count(service: NewsletterService) -> int:
    with service.storage.transaction(write=False) as uow:
        connection = uow.connection  # type: ignore[attr-defined]
        return int(connection.scalar(select(func.count()).select_from(issues)))


@pytest.fixture
def plugin() -> ContentPlugin:
    return ContentPlugin()


@pytest.fixture
def service(newsletter_settings: Any, newsletter_storage: Any, plugin: ContentPlugin) -> Any:
    return build(newsletter_settings, newsletter_storage, plugin)


@pytest.mark.parametrize("kind", ["daily", "weekly", "manual", "test"])
def test_every_kind_records_one_issue(
    service: NewsletterService, plugin: ContentPlugin, kind: str
) -> None:
    record = service.issues.run_digest(kind)
    assert issue_count(service) == 1
    assert record.kind == kind and record.cadence == kind
    assert record.issue_date == "2026-11-21"  # today (UTC) by default
    assert record.site_url == "https://news.example.test"  # origin of base_url
    assert record.postal_address == "1 Test Street, Testville, TS 00000"
    assert record.sections == {k: v for k, v in sample_issue_content().items() if k != "subject"}
    assert record.html is not None and "{{unsubscribe_url}}" in record.html
    assert record.text is not None and "{{unsubscribe_url}}" in record.text
    assert record.created_at == NOW
    assert service.issues.latest() == record
    (call,) = plugin.calls
    assert call[:2] == (kind, "2026-11-21") and call[2] is service.settings


@pytest.mark.parametrize(
    ("kind", "subject"),
    [
        ("daily", "Test News: Saturday, November 21, 2026"),
        ("weekly", "Test News weekly: the week of Saturday, November 21, 2026"),
        ("manual", "Test News special edition: Saturday, November 21, 2026"),
        ("test", "[TEST] Test News: Saturday, November 21, 2026"),
    ],
)
def test_default_subject_per_kind(service: NewsletterService, kind: str, subject: str) -> None:
    assert service.issues.run_digest(kind).subject == subject


@pytest.mark.parametrize(
    ("kind", "subject"),
    [
        ("daily", "Test News: sábado, 21 de noviembre de 2026"),
        ("weekly", "Test News, resumen semanal: semana del sábado, 21 de noviembre de 2026"),
        ("manual", "Test News, edición especial: sábado, 21 de noviembre de 2026"),
        ("test", "[PRUEBA] Test News: sábado, 21 de noviembre de 2026"),
    ],
)
def test_a_spanish_site_gets_its_default_subjects_and_test_mark_in_spanish(
    newsletter_settings: Any, newsletter_storage: Any, kind: str, subject: str
) -> None:
    """The subject speaks the language of the body: no English "weekly", "[TEST]" or date."""
    service = build(
        newsletter_settings, newsletter_storage, ContentPlugin(subject=None), language="es"
    )
    record = service.issues.run_digest(kind)
    assert record.subject == subject
    assert record.text is not None and "sábado, 21 de noviembre de 2026" in record.text
    assert "Saturday" not in record.subject + record.text


def test_a_spanish_test_issue_is_marked_once_even_when_its_content_names_the_mark(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    service = build(
        newsletter_settings, newsletter_storage, ContentPlugin(subject="[PRUEBA] Gripe"),
        language="es",
    )  # fmt: skip
    assert service.issues.run_digest("test").subject == "[PRUEBA] Gripe"
    assert (
        service.issues.run_digest("test", content=sample_issue_content(subject="Gripe")).subject
        == "[PRUEBA] Gripe"
    )


def test_subject_from_content_wins_and_test_runs_are_marked(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    service = build(
        newsletter_settings, newsletter_storage, ContentPlugin(subject="  Flu season  ")
    )
    assert service.issues.run_digest("manual").subject == "Flu season"
    assert service.issues.run_digest("test").subject == "[TEST] Flu season"


def test_site_url_setting_wins_over_base_url(
    newsletter_settings: Any, newsletter_storage: Any, plugin: ContentPlugin
) -> None:
    service = build(
        newsletter_settings, newsletter_storage, plugin, site_url="https://www.example.org"
    )
    record = service.issues.run_digest("manual")
    assert record.site_url == "https://www.example.org"
    assert 'href="https://www.example.org"' in (record.html or "")


def test_no_postal_address_is_null(
    newsletter_settings: Any, newsletter_storage: Any, plugin: ContentPlugin
) -> None:
    service = build(newsletter_settings, newsletter_storage, plugin, postal_address=None)
    assert service.issues.run_digest("manual").postal_address is None


def test_explicit_content_is_used_instead_of_the_hook(
    service: NewsletterService, plugin: ContentPlugin
) -> None:
    content = sample_issue_content(puzzle_hint="Explicit hint")
    record = service.issues.run_digest("manual", "2026-11-20", content)
    assert record.sections["puzzle_hint"] == "Explicit hint"
    assert record.issue_date == "2026-11-20"
    assert plugin.calls == []


@pytest.mark.parametrize("given", ["2026-11-20", date(2026, 11, 20), datetime(2026, 11, 20, 23)])
def test_date_may_be_text_or_date(service: NewsletterService, given: Any) -> None:
    assert service.issues.run_digest("manual", given).issue_date == "2026-11-20"


@pytest.mark.parametrize("bad", ["20-11-2026", "2026-13-01", "", "tomorrow", 20261120])
def test_bad_date_is_named(service: NewsletterService, bad: Any) -> None:
    with pytest.raises(InvalidRequest) as caught:
        service.issues.run_digest("manual", bad)
    assert caught.value.field == "date"
    assert issue_count(service) == 0


@pytest.mark.parametrize("bad", ["hourly", "Daily", ""])
def test_unknown_kind_is_named(service: NewsletterService, bad: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        service.issues.run_digest(bad)
    assert caught.value.field == "kind"


def test_no_content_plugin_and_no_content_is_a_clear_error(
    newsletter_service: NewsletterService,
) -> None:
    with pytest.raises(InvalidRequest, match="no plugin answered newsletter_issue_content") as c:
        newsletter_service.issues.run_digest("daily")
    assert c.value.field == "content"
    assert issue_count(newsletter_service) == 0


def test_first_plugin_answering_wins(newsletter_settings: Any, newsletter_storage: Any) -> None:
    class Silent:
        @hookimpl
        def newsletter_issue_content(self, kind: str, date: str, settings: Any) -> None:
            return None

    answering = ContentPlugin(puzzle_hint="from the answering plugin")
    service = build(newsletter_settings, newsletter_storage, answering, Silent())
    assert service.issues.run_digest("daily").sections["puzzle_hint"] == (
        "from the answering plugin"
    )


# -- once per period -------------------------------------------------------------------------


def test_no_second_daily_issue_for_the_same_day(
    service: NewsletterService, plugin: ContentPlugin
) -> None:
    first = service.issues.run_digest("daily", "2026-11-21")
    with pytest.raises(IssueAlreadyRecorded) as caught:
        service.issues.run_digest("daily", "2026-11-21")
    assert caught.value.existing == first
    assert caught.value.field == "date"
    assert f"(issue {first.id})" in caught.value.message
    assert len(plugin.calls) == 1  # the content was not even asked for again
    assert issue_count(service) == 1
    assert service.issues.run_digest("daily", "2026-11-22").period_key == "daily:2026-11-22"


def test_weekly_is_once_per_iso_week(service: NewsletterService) -> None:
    # 2026-11-16 is a Monday; 2026-11-22 the Sunday of the same ISO week (W47).
    record = service.issues.run_digest("weekly", "2026-11-16")
    assert record.period_key == "weekly:2026-W47"
    with pytest.raises(IssueAlreadyRecorded):
        service.issues.run_digest("weekly", "2026-11-22")
    assert service.issues.run_digest("weekly", "2026-11-23").period_key == "weekly:2026-W48"
    # ISO week-numbering year: 2027-01-01 is in 2026-W53.
    assert service.issues.run_digest("weekly", "2027-01-01").period_key == "weekly:2026-W53"


def test_manual_and_test_runs_are_not_limited(service: NewsletterService) -> None:
    for kind in ("manual", "manual", "test", "test"):
        assert service.issues.run_digest(kind, "2026-11-21").period_key is None
    service.issues.run_digest("daily", "2026-11-21")
    assert service.issues.run_digest("manual", "2026-11-21").kind == "manual"
    assert issue_count(service) == 6


# -- rendering -------------------------------------------------------------------------------


class PlainRenderer:
    """A renderer plugin offering ``plain`` (no text alternative) and ``broken`` (no
    placeholder)."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    @hookimpl
    def newsletter_issue_renderers(self) -> list[IssueRenderer]:
        def plain(issue: dict[str, Any], settings: Any) -> str:
            self.seen.append(issue)
            return f"<p>{issue['subject']}</p><a href='{{{{unsubscribe_url}}}}'>stop</a>"

        return [
            IssueRenderer(name="plain", description="test", render=plain),
            IssueRenderer(name="broken", description="test", render=lambda i, s: "<p>hi</p>"),
            IssueRenderer(
                name="broken_text",
                description="test",
                render=plain,
                render_text=lambda i, s: "no placeholder",
            ),
        ]


def test_configured_renderer_is_used_with_the_issue_without_html(
    newsletter_settings: Any, newsletter_storage: Any, plugin: ContentPlugin
) -> None:
    renderer = PlainRenderer()
    service = build(
        newsletter_settings, newsletter_storage, plugin, renderer, issue_renderer="plain"
    )
    record = service.issues.run_digest("manual")
    assert record.html == f"<p>{record.subject}</p><a href='{{{{unsubscribe_url}}}}'>stop</a>"
    assert record.text is None
    (seen,) = renderer.seen
    assert seen == issue_object(record, include_id=False, include_html=False)


@pytest.mark.parametrize("name", ["broken", "broken_text"])
def test_renderer_output_without_placeholder_fails_the_run(
    newsletter_settings: Any, newsletter_storage: Any, plugin: ContentPlugin, name: str
) -> None:
    service = build(
        newsletter_settings, newsletter_storage, plugin, PlainRenderer(), issue_renderer=name
    )
    with pytest.raises(InvalidRequest, match=r"\{\{unsubscribe_url\}\}") as caught:
        service.issues.run_digest("daily")
    assert caught.value.field == "issue_renderer"
    assert issue_count(service) == 0 and outbox(service) == []


def test_unknown_renderer_fails_the_run(
    newsletter_settings: Any, newsletter_storage: Any, plugin: ContentPlugin
) -> None:
    service = build(newsletter_settings, newsletter_storage, plugin, issue_renderer="fancy")
    with pytest.raises(PluginNotFound, match=r"'fancy'.*html.*is the plugin installed"):
        service.issues.run_digest("daily")
    assert issue_count(service) == 0


# -- the newsletter.issue event --------------------------------------------------------------


@pytest.mark.parametrize("kind", ["daily", "weekly", "manual", "test"])
def test_connector_mode_queues_the_issue_event(service: NewsletterService, kind: str) -> None:
    assert service.settings.delivery_mode == "connector"
    record = service.issues.run_digest(kind)
    (event,) = outbox(service)
    assert event["event_type"] == "newsletter.issue"
    assert event["subscriber_key"] is None
    assert event["occurred_at"] == NOW
    payload = event["payload"]
    assert "id" not in payload
    assert payload == {
        "kind": kind,
        "cadence": kind,
        "date": "2026-11-21",
        "subject": record.subject,
        "site_url": record.site_url,
        "postal_address": record.postal_address,
        "sections": record.sections,
        "html": record.html,
        "text": record.text,
    }
    assert payload == issue_object(service.issues.latest(), include_id=False, include_html=True)


@pytest.mark.parametrize("kind", ["daily", "weekly", "manual", "test"])
def test_site_mode_queues_nothing(
    newsletter_settings: Any, newsletter_storage: Any, plugin: ContentPlugin, kind: str
) -> None:
    service = build(newsletter_settings, newsletter_storage, plugin, delivery_mode="site")
    service.issues.run_digest(kind)
    assert issue_count(service) == 1
    assert outbox(service) == []


def test_issue_and_event_commit_together(
    service: NewsletterService, monkeypatch: pytest.MonkeyPatch
) -> None:
    import newsletter_connector.service.issues as issues_module

    def failing_queue(*args: Any, **kwargs: Any) -> str:
        raise RuntimeError("outbox write failed")

    monkeypatch.setattr(issues_module, "queue_event", failing_queue)
    with pytest.raises(RuntimeError, match="outbox write failed"):
        service.issues.run_digest("daily")
    assert issue_count(service) == 0  # the issue row rolled back with the failed event
    monkeypatch.undo()
    service.issues.run_digest("daily")  # and the period is still free
    assert issue_count(service) == 1 and len(outbox(service)) == 1


def test_duplicate_daily_queues_no_second_event(service: NewsletterService) -> None:
    service.issues.run_digest("daily")
    with pytest.raises(IssueAlreadyRecorded):
        service.issues.run_digest("daily")
    assert len(outbox(service)) == 1


# -- reading ---------------------------------------------------------------------------------


def test_list_newest_first_and_bodies_on_request(service: NewsletterService) -> None:
    ids = [service.issues.run_digest("manual").id for _ in range(3)]
    listed = service.issues.list(2)
    assert [r.id for r in listed] == ids[::-1][:2]
    assert all(r.html is None for r in listed)
    assert all(r.html for r in service.issues.list(5, include_html=True))


@pytest.mark.parametrize("limit", [0, 501, -1, True])
def test_list_limit_is_checked(service: NewsletterService, limit: Any) -> None:
    with pytest.raises(InvalidRequest) as caught:
        service.issues.list(limit)
    assert caught.value.field == "limit"


def test_latest_before_any_issue_is_not_found(service: NewsletterService) -> None:
    from newsletter_connector.errors import NotFound

    with pytest.raises(NotFound, match="no issue"):
        service.issues.latest()
