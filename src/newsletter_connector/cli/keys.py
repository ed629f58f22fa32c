"""``newsletter-connector keys ...``: the newsletter API keys."""

from __future__ import annotations

import click

from ..timeutil import isoformat_z
from .context import CliState, pass_state, reports_errors


@click.group("keys")
def keys() -> None:
    """Newsletter API keys."""


@keys.command("create")
@click.option("--label", required=True, help="A name for the key, e.g. the client using it.")
@pass_state
@reports_errors
def keys_create(state: CliState, label: str) -> None:
    """Issue a key. It is printed exactly once; only its SHA-256 digest is stored."""
    issued = state.service().admin.create_api_key(label)
    state.audit("api_key.create", issued.record.label)
    click.echo(issued.key)
    click.echo(
        f"key {issued.record.label!r} created; store it now, it cannot be shown again", err=True
    )


@keys.command("list")
@pass_state
@reports_errors
def keys_list(state: CliState) -> None:
    """List keys (label, prefix, created, last used day, revoked); never the keys."""
    records = state.service().admin.list_api_keys()
    if not records:
        click.echo("no API keys")
        return
    for record in records:
        revoked = f"revoked {isoformat_z(record.revoked_at)}" if record.revoked_at else "active"
        used = f"last used {record.last_used_on}" if record.last_used_on else "never used"
        click.echo(
            f"{record.id}\t{record.label}\t{record.key_prefix}…\t"
            f"created {isoformat_z(record.created_at)}\t{used}\t{revoked}"
        )


@keys.command("revoke")
@click.argument("label_or_id")
@pass_state
@reports_errors
def keys_revoke(state: CliState, label_or_id: str) -> None:
    """Revoke a key by label or id; effective on the next request."""
    record = state.service().admin.revoke_api_key(label_or_id)
    state.audit("api_key.revoke", record.label)
    click.echo(f"key {record.label!r} revoked")
