"""``newsletter-connector plugins``: the loaded plugins, the blocked ones, and what they offer."""

from __future__ import annotations

import click

from ..plugin_manager import (
    build_plugin_manager,
    distribution_of,
    issue_renderers,
    outbound_transports,
    storage_backends,
)
from .context import CliState, pass_state, reports_errors


@click.command("plugins")
@pass_state
@reports_errors
def plugins_command(state: CliState) -> None:
    """List loaded plugins, the ones blocked_plugins blocks, and what they offer."""
    pm = build_plugin_manager(settings=state.settings())
    click.echo("plugins:")
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda item: str(item[0])):
        if plugin is None:  # pluggy keeps a blocked name, without a plugin
            click.echo(f"  {name} (blocked)")
            continue
        dist = distribution_of(name)
        origin = f" ({dist.name} {dist.version})" if dist else " (built-in)"
        click.echo(f"  {name}{origin}")
    for title, offered in (
        ("storage backends", storage_backends(pm)),
        ("issue renderers", issue_renderers(pm)),
        ("outbound transports", outbound_transports(pm)),
    ):
        click.echo(f"{title}:")
        for descriptor in offered:
            click.echo(f"  {descriptor.name}: {descriptor.description}")
        if not offered:
            click.echo("  (none)")
