"""docs/plugins.md shows the ``issue`` argument an issue renderer receives: the example is what
a renderer really gets for that run, checked against a renderer that records its arguments."""

from __future__ import annotations

import json
from typing import Any

from newsletter_connector import NewsletterService, hookimpl
from newsletter_connector.descriptors import IssueRenderer
from newsletter_connector.plugins import html_renderer
from tests.support.docblocks import docblock


class RecordingRenderer:
    """Offers ``recording``: the built-in ``html`` renderer that keeps what it was given."""

    def __init__(self) -> None:
        self.html_calls: list[Any] = []
        self.text_calls: list[Any] = []

    def render(self, issue: Any, settings: Any) -> str:
        self.html_calls.append(json.loads(json.dumps(issue)))
        assert type(issue) is dict
        return html_renderer.render_html(issue, settings)

    def render_text(self, issue: Any, settings: Any) -> str:
        self.text_calls.append(json.loads(json.dumps(issue)))
        return html_renderer.render_text(issue, settings)

    @hookimpl
    def newsletter_issue_renderers(self) -> list[IssueRenderer]:
        return [IssueRenderer("recording", "records its input", self.render, self.render_text)]


def test_the_documented_issue_argument_is_what_a_renderer_receives(
    newsletter_settings: Any, newsletter_storage: Any
) -> None:
    documented = json.loads(docblock("renderer-issue-argument"))
    settings = newsletter_settings.model_copy(
        update={
            "site_name": "Springfield News",
            "site_url": documented["site_url"],
            "postal_address": documented["postal_address"],
            "issue_renderer": "recording",
        }
    )
    recorder = RecordingRenderer()
    service = NewsletterService.build(settings, storage=newsletter_storage, plugins=[recorder])
    record = service.issues.run_digest(
        documented["kind"], documented["date"], content=documented["sections"]
    )
    assert recorder.html_calls == [documented]
    assert recorder.text_calls == [documented]
    (received,) = recorder.html_calls
    assert list(received) == list(documented)  # the keys in the order shown
    assert list(received["sections"]) == list(documented["sections"])
    assert record.sections == documented["sections"] and record.subject == documented["subject"]
