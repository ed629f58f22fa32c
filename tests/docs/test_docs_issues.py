"""The examples of docs/issues.md run as written: the content plugin, the renderer plugin and
the Python API snippet."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from newsletter_connector.service import NewsletterService
from newsletter_connector.testing.issue_samples import sample_issue_content
from tests.support.docblocks import docblock, run_block, settings_environment
from tests.support.paths import ROOT

DOC = ROOT / "docs" / "issues.md"
NOW = datetime(2026, 11, 21, 11, 0)  # a Saturday, after the 10:00 UTC digest hour


def example(name: str) -> str:
    return docblock(name)


def load_module(name: str) -> types.ModuleType:
    module = types.ModuleType(f"docs_example_{name.replace('-', '_')}")
    exec(compile(example(name), f"{DOC.name}:{name}", "exec"), module.__dict__)
    return module


def build(settings: Any, storage: Any, *plugins: Any, **changes: Any) -> NewsletterService:
    return NewsletterService.build(
        settings.model_copy(update=changes),
        storage=storage,
        plugins=list(plugins),
        clock=lambda: NOW,
    )


def test_content_plugin_example(newsletter_settings: Any, newsletter_storage: Any) -> None:
    plugin = load_module("content-plugin")
    service = build(newsletter_settings, newsletter_storage, plugin)
    daily = service.issues.run_digest("daily", "2026-11-21")
    site = "https://news.example.test"
    assert daily.subject == "Test News: High-dose flu shots: who should get one"
    assert daily.sections["briefing"] == {
        "date": "2026-11-21",
        "title": "High-dose flu shots: who should get one",
        "url": f"{site}/health/flu",
    }
    assert daily.sections["on_this_day"] == [
        {
            "year": 1969,
            "text": "Apollo 12 heads home from the Moon.",
            "url": f"{site}/on-this-day/apollo-12",
        }
    ]
    assert [t["slug"] for t in daily.sections["topics"]] == ["health"]
    weekly = service.issues.run_digest("weekly", "2026-11-21")
    topics = {t["slug"]: t for t in weekly.sections["topics"]}
    assert [i["title"] for i in topics["money"]["items"]] == [
        "Your 2027 COLA, explained",
        "Tax moves to make before December",
    ]
    assert topics["money"]["summary"] == "2 new stories"
    # A quiet day still gets an edition, with the latest story as its briefing.
    quiet = service.issues.run_digest("manual", "2026-12-25")
    assert quiet.sections["briefing"]["title"] == "High-dose flu shots: who should get one"
    assert quiet.sections["on_this_day"] == []


def test_renderer_plugin_example(newsletter_settings: Any, newsletter_storage: Any) -> None:
    renderer = load_module("renderer-plugin")
    service = build(newsletter_settings, newsletter_storage, renderer, issue_renderer="minimal")
    content = sample_issue_content()
    content["topics"][0]["items"][0]["title"] = "<b>Flu</b> & you"
    record = service.issues.run_digest("manual", "2026-11-21", content)
    assert record.html is not None and record.text is not None
    assert '<a href="{{unsubscribe_url}}">Unsubscribe</a>' in record.html
    assert "&lt;b&gt;Flu&lt;/b&gt; &amp; you" in record.html
    assert "1 Test Street, Testville, TS 00000" in record.html
    assert record.text.startswith(record.subject)
    assert "Unsubscribe: {{unsubscribe_url}}" in record.text


@pytest.fixture
def my_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The worked example saved as the page says, ``my_site/newsletter_content.py``, importable."""
    package = tmp_path / "my_site"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "newsletter_content.py").write_text(example("content-plugin"))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in ("my_site.newsletter_content", "my_site"):
        sys.modules.pop(name, None)


@pytest.fixture
def environment(
    newsletter_settings: Any, newsletter_storage: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``NEWSLETTER_*`` variables name the test database; services run at ``NOW``."""
    settings_environment(monkeypatch, newsletter_settings)
    build = NewsletterService.build.__func__  # type: ignore[attr-defined]

    def at_now(cls: type[NewsletterService], *args: Any, **kwargs: Any) -> NewsletterService:
        return build(cls, *args, **{"clock": lambda: NOW, **kwargs})

    monkeypatch.setattr(NewsletterService, "build", classmethod(at_now))


def test_python_api_example(my_site: None, environment: None) -> None:
    namespace = run_block("python-api")
    try:
        assert namespace["issue"].kind == "daily" and namespace["extra"].kind == "manual"
        assert namespace["extra"].sections["briefing"]["date"] == "2026-11-21"
        # At 11:00 on a Saturday the day's daily exists already; the week's weekly is due.
        assert [r.kind for r in namespace["created"]] == ["weekly"]
        assert namespace["latest"].id == namespace["created"][0].id
        assert [r.kind for r in namespace["recent"]] == ["weekly", "manual", "daily"]
    finally:
        namespace["service"].close()


def test_registering_the_plugin_example(my_site: None, environment: None) -> None:
    namespace = run_block("issues-register-plugin")
    app, service = namespace["app"], namespace["service"]
    try:
        for issues in (app.service.issues, service.issues):
            issue = issues.run_digest("manual", "2026-11-21")  # content from the plugin
            assert issue.subject == "Test News: High-dose flu shots: who should get one"
    finally:
        app.service.close()
        service.close()


@pytest.mark.parametrize("image", ["sample-issue.png", "sample-issue-dark.png"])
def test_sample_images_are_in_the_docs(image: str) -> None:
    path = DOC.parent / "images" / image
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"images/{image}" in DOC.read_text(encoding="utf-8")


def test_sample_image_source_matches_the_renderer() -> None:
    """The screenshot's HTML source is what the renderer makes today; when the templates
    change, regenerate it (and the images) with ``scripts/render_sample_issue.py --dark``."""
    import importlib.util

    script = DOC.parents[1] / "scripts" / "render_sample_issue.py"
    spec = importlib.util.spec_from_file_location("render_sample_issue", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    current = (DOC.parent / "images" / "sample-issue.html").read_text(encoding="utf-8")
    assert current == module.sample_html(), "run scripts/render_sample_issue.py --dark"
