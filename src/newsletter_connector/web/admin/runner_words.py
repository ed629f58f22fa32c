"""What the admin pages say about the sync runner, the background program that imports lists,
works through acts on many subscribers and sends events to the mailing platform: when none
has been at work lately, words an editor can act on (who starts it, and what waits)."""

from __future__ import annotations

from ...service.runner_status import RunnerSeen
from .subscriber_words import when


def runner_quiet(seen: RunnerSeen) -> str | None:
    """The warning to show while no runner is at work (``None`` while one is)."""
    if not seen.quiet:
        return None
    since = f"since {when(seen.last_seen)}" if seen.last_seen else "yet"
    return (
        f"No sync runner has been at work {since}. The sync runner is the site's background "
        "program that imports lists, works through acts on many subscribers and sends events to "
        "the mailing platform: until it runs, they wait. Whoever runs the site's server starts "
        "it (the command newsletter-connector sync); once it runs, the work starts within a "
        "minute."
    )
