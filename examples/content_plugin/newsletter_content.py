"""An issue content plugin: each digest is built from the site's recent articles.

docs/issues.md quotes this module (from the line naming its path) and the test suite runs it;
``NewsletterService.build(plugins=[newsletter_content])`` registers it.
"""

# examples/content_plugin/newsletter_content.py
from datetime import date as Date, timedelta

from newsletter_connector import hookimpl

# Stand-in for the site's CMS: (published, topic, title, path, source).
ARTICLES = [
    ("2026-11-21", "health", "High-dose flu shots: who should get one", "/health/flu", "Health desk"),
    ("2026-11-20", "money", "Your 2027 COLA, explained", "/money/cola-2027", "Money desk"),
    ("2026-11-17", "money", "Tax moves to make before December", "/money/tax-moves", "AP"),
]
TOPICS = {"health": "Health", "money": "Money"}
ON_THIS_DAY = {"11-21": [(1969, "Apollo 12 heads home from the Moon.", "/on-this-day/apollo-12")]}


@hookimpl
def newsletter_issue_content(kind, date, settings):
    site = settings.effective_site_url
    day = Date.fromisoformat(date)
    since = day - timedelta(days=7 if kind == "weekly" else 1)
    recent = [a for a in ARTICLES if since < Date.fromisoformat(a[0]) <= day]
    if not recent:
        recent = ARTICLES[:1]  # never send an empty edition
    lead = recent[0]
    return {
        "subject": f"{settings.site_name}: {lead[2]}",
        "briefing": {"date": date, "title": lead[2], "url": site + lead[3]},
        "on_this_day": [
            {"year": year, "text": text, "url": site + path}
            for year, text, path in ON_THIS_DAY.get(date[5:], [])
        ],
        "puzzle_hint": "Today's word rhymes with 'delight'.",
        "topics": [
            {
                "slug": slug,
                "label": label,
                "summary": f"{sum(a[1] == slug for a in recent)} new stories",
                "items": [
                    {"title": a[2], "url": site + a[3], "source": a[4]}
                    for a in recent
                    if a[1] == slug
                ],
            }
            for slug, label in TOPICS.items()
            if any(a[1] == slug for a in recent)
        ],
    }
