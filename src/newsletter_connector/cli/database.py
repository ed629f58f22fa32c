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
    """Migrate the database to this version's schema (and create the site secret); says
    whether it created the schema, migrated it (from which revision) or found it current."""
    done = state.service(ready=False).initialise()
    click.echo(f"database {done or 'is up to date'}")


@db.command("current")
@pass_state
@reports_errors
def db_current(state: CliState) -> None:
    """Say whether the database schema is current."""
    state.service(ready=True)
    click.echo("database schema is current")
