"""``newsletter-connector erase EMAIL``: erasure of everything stored about an address."""

from __future__ import annotations

import click

from ..service.events import subscriber_key
from .context import CliState, pass_state, reports_errors


@click.command("erase")
@click.argument("email")
@pass_state
@reports_errors
def erase(state: CliState, email: str) -> None:
    """Erase everything stored about EMAIL, subscriber or not.

    Deletes the subscriber (if any), the contact messages sent from EMAIL and every outbox
    event carrying it (queued or delivered), in one transaction, and keeps a deletion record
    (a keyed hash of the address, never the address) noting what was erased. Prints what was
    erased, never the address. Exit status 0 when done (also when nothing was stored), 1 when
    EMAIL is not an address or the database cannot be reached.
    """
    service = state.service()
    result = service.subscribers.erase_address(email)
    state.audit("subscriber.erase", subscriber_key(service.context, result.email))
    if result.previous_status is None:
        click.echo("subscriber: none")
    else:
        click.echo(f"subscriber: erased (was {result.previous_status})")
    click.echo(f"contact messages: {result.erased_messages} erased")
    click.echo(f"undelivered events: {result.discarded_events} discarded")
    click.echo("deletion recorded")
