"""Builds the plugin manager for one app and resolves plugin offerings by name."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from functools import cache
from importlib.metadata import Distribution, entry_points
from typing import TYPE_CHECKING, Any, TypeVar

import pluggy

from . import hookspecs
from .descriptors import IssueRenderer, OutboundTransport, StorageBackend, SubscriberStore
from .errors import PluginNotFound

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

D = TypeVar("D", StorageBackend, SubscriberStore, IssueRenderer, OutboundTransport)


def build_plugin_manager(
    plugins: Iterable[Any] = (), *, load_entry_points: bool = True
) -> pluggy.PluginManager:
    """A fresh plugin manager: built-ins, then installed entry points, then ``plugins``.

    Each app builds its own, so two apps in one process never share plugin state.
    :raises pluggy.PluginValidationError: when a plugin implements an unknown hook.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for dotted in DEFAULT_PLUGINS:
        module = importlib.import_module(dotted)
        pm.register(module, name=dotted)
    if load_entry_points:
        for name, plugin, _ in installed_plugins():
            if pm.get_plugin(name) is None and not pm.is_blocked(name):
                pm.register(plugin, name=name)
    for plugin in plugins:
        pm.register(plugin)
    pm.check_pending()
    return pm


@cache
def installed_plugins() -> tuple[tuple[str, Any, Distribution], ...]:
    """The plugins installed distributions declare in the ``newsletter_connector`` entry-point
    group, as ``(name, plugin, distribution)``, loaded once per process as pytest and Datasette
    do: reading every distribution's metadata cost each app (and each test) some 10 ms. A
    distribution installed while the process runs is seen by the next process."""
    return tuple(
        (entry_point.name, entry_point.load(), entry_point.dist)
        for entry_point in entry_points(group=ENTRY_POINT_GROUP)
        if entry_point.dist is not None
    )


def distribution_of(plugin: Any) -> Distribution | None:
    """The installed distribution that declared ``plugin``, or None (a built-in or a plugin
    passed to :func:`build_plugin_manager`)."""
    return next((dist for _, loaded, dist in installed_plugins() if loaded is plugin), None)


def _flatten(results: Sequence[Sequence[D]]) -> list[D]:
    seen: dict[str, D] = {}
    for offered in results:
        for descriptor in offered or ():
            seen.setdefault(descriptor.name, descriptor)
    return list(seen.values())


def storage_backends(pm: pluggy.PluginManager) -> list[StorageBackend]:
    """Every storage backend offered, first offer of a name winning."""
    return _flatten(pm.hook.newsletter_storage_backends())


def subscriber_stores(pm: pluggy.PluginManager) -> list[SubscriberStore]:
    """Every subscriber store offered, first offer of a name winning."""
    return _flatten(pm.hook.newsletter_subscriber_stores())


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
        ) from None
