"""``newsletter-connector db ...``: the database schema."""

from __future__ import annotations

import click

from .context import CliState, pass_state, reports_errors


@click.group("db")
def db() -> None:
    """Database schema."""


@db.command("upgrade")
@pass_state
@reports_errors
def db_upgrade(state: CliState) -> None:
    """Migrate the database to this version's schema (and create the site secret)."""
    service = state.service(ready=False)
    service.initialise()
    click.echo(f"database is up to date ({state.settings().database_url.split('://')[0]})")


@db.command("current")
@pass_state
@reports_errors
def db_current(state: CliState) -> None:
    """Say whether the database schema is current."""
    state.service(ready=True)
    click.echo("database schema is current")
