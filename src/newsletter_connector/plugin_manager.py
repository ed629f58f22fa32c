"""Builds the plugin manager for one app and resolves plugin offerings by name."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from functools import cache
from importlib.metadata import Distribution, EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, TypeVar

import pluggy

from . import hookspecs
from .descriptors import IssueRenderer, OutboundTransport, SubscriberStore
from .errors import PluginNotFound
from .hook_tracing import trace_hook_calls
from .settings import SettingsError

if TYPE_CHECKING:
    from .settings import Settings

ENTRY_POINT_GROUP = "newsletter_connector"

#: Built-in plugins, registered exactly like third-party ones (their impls are ``trylast``).
DEFAULT_PLUGINS: tuple[str, ...] = (
    "newsletter_connector.plugins.sql_store",
    "newsletter_connector.plugins.html_renderer",
    "newsletter_connector.plugins.events_transport",
    "newsletter_connector.plugins.platform_transport",
)

D = TypeVar("D", SubscriberStore, IssueRenderer, OutboundTransport)


def build_plugin_manager(
    plugins: Iterable[Any] = (),
    *,
    load_entry_points: bool = True,
    settings: Settings | None = None,
) -> pluggy.PluginManager:
    """A fresh plugin manager: built-ins, then installed entry points, then ``plugins``; none
    of those the settings' ``blocked_plugins`` names, blocked before any is registered (a
    blocked entry point is not even loaded). With ``trace_hooks`` on, each hook call is
    logged (:mod:`.hook_tracing`).

    Each app builds its own, so two apps in one process never share plugin state.
    :raises pluggy.PluginValidationError: when a plugin implements an unknown hook.
    :raises SettingsError: when ``blocked_plugins`` names no known plugin, naming them.
    """
    plugins = list(plugins)
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    if settings is not None:
        _block(pm, settings, plugins)
    for dotted in DEFAULT_PLUGINS:
        if not pm.is_blocked(dotted):
            pm.register(importlib.import_module(dotted), name=dotted)
    if load_entry_points:
        for entry_point in installed_entry_points():
            name = entry_point.name
            if pm.get_plugin(name) is None and not pm.is_blocked(name):
                pm.register(_loaded(entry_point), name=name)
    for plugin in plugins:
        pm.register(plugin)
    pm.check_pending()
    if settings is not None and settings.trace_hooks:
        trace_hook_calls(pm)
    return pm


def _block(pm: pluggy.PluginManager, settings: Settings, plugins: Sequence[Any]) -> None:
    """Block each plugin ``blocked_plugins`` names, refusing a name no plugin has (a typo
    would otherwise leave the plugin it meant running without a word)."""
    known = {
        *DEFAULT_PLUGINS,
        *(entry_point.name for entry_point in installed_entry_points()),
        *(pm.get_canonical_name(plugin) for plugin in plugins),
    }
    for name in settings.blocked_plugins:
        if name not in known:
            raise SettingsError(
                f"setting blocked_plugins ({settings.source_of('blocked_plugins')}): no plugin "
                f"is called {name!r} (known: {', '.join(sorted(known))})"
            )
        pm.set_blocked(name)


def blocked_plugins_hint(settings: Settings) -> str:
    """What to add to a "not installed" message when plugins are blocked: the plugin that
    would offer the missing one may be among them."""
    if not settings.blocked_plugins:
        return ""
    names = ", ".join(settings.blocked_plugins)
    source = settings.source_of("blocked_plugins")
    return f" (it may be blocked: blocked_plugins ({source}) names {names})"


@cache
def installed_entry_points() -> tuple[EntryPoint, ...]:
    """The plugins installed distributions declare in the ``newsletter_connector`` entry-point
    group, read once per process as pytest and Datasette do: reading every distribution's
    metadata cost each app (and each test) some 10 ms. A distribution installed while the
    process runs is seen by the next process."""
    return tuple(
        entry_point
        for entry_point in entry_points(group=ENTRY_POINT_GROUP)
        if entry_point.dist is not None
    )


@cache
def _loaded(entry_point: EntryPoint) -> Any:
    """The plugin ``entry_point`` names, imported once per process, and only when used."""
    return entry_point.load()


def distribution_of(name: str) -> Distribution | None:
    """The installed distribution that declared the plugin registered as ``name``, or None (a
    built-in or a plugin passed to :func:`build_plugin_manager`)."""
    if name in DEFAULT_PLUGINS:
        return None
    return next((ep.dist for ep in installed_entry_points() if ep.name == name), None)


def _flatten(results: Sequence[Sequence[D]]) -> list[D]:
    seen: dict[str, D] = {}
    for offered in results:
        for descriptor in offered or ():
            seen.setdefault(descriptor.name, descriptor)
    return list(seen.values())


def storage_backends(pm: pluggy.PluginManager) -> list[SubscriberStore]:
    """Every storage backend (a subscriber store) offered, first offer of a name winning."""
    return _flatten(pm.hook.newsletter_storage_backends())


def issue_renderers(pm: pluggy.PluginManager) -> list[IssueRenderer]:
    """Every issue renderer offered, first offer of a name winning."""
    return _flatten(pm.hook.newsletter_issue_renderers())


def outbound_transports(pm: pluggy.PluginManager) -> list[OutboundTransport]:
    """Every outbound transport offered, first offer of a name winning."""
    return _flatten(pm.hook.newsletter_outbound_transports())


def has_issue_content(pm: pluggy.PluginManager) -> bool:
    """Whether an installed plugin implements ``newsletter_issue_content`` (an issue content
    plugin: what scheduled digests are built from)."""
    return bool(pm.hook.newsletter_issue_content.get_hookimpls())


def has_host_admin(pm: pluggy.PluginManager) -> bool:
    """Whether an installed plugin implements ``newsletter_admin_user`` (the host signs its
    admins in, and the built-in admin login is off)."""
    return bool(pm.hook.newsletter_admin_user.get_hookimpls())


def pick(kind: str, offered: Iterable[D], name: str) -> D:
    """The descriptor called ``name``.

    :raises PluginNotFound: naming the kind, the name and what is available.
    """
    offered = list(offered)
    for descriptor in offered:
        if descriptor.name == name:
            return descriptor
    available = ", ".join(sorted(d.name for d in offered)) or "none"
    raise PluginNotFound(
        f"unknown {kind} {name!r} (available: {available}); is the plugin installed?"
    )


def pick_setting(kind: str, offered: Iterable[D], settings: Settings, field: str) -> D:
    """The descriptor the setting ``field`` names, as :func:`pick`.

    :raises PluginNotFound: also naming the setting and where its value came from.
    """
    try:
        return pick(kind, offered, getattr(settings, field))
    except PluginNotFound as exc:
        raise PluginNotFound(
            f"setting {field} ({settings.source_of(field)}): {exc.message}"
            + blocked_plugins_hint(settings)
        ) from None
