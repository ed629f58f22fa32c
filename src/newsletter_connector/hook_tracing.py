"""Logging each plugin hook call (the ``trace_hooks`` setting), as pytest's ``--debug`` traces
pluggy's: one DEBUG record per call on the ``newsletter_connector.hooks`` logger, naming the
hook, the plugins implementing it (in the order they are called), how many results came back
(or the type of the exception raised) and how long the call took.

Never the call's arguments: hooks receive the settings (``newsletter_issue_content``) and the
request's environ (``newsletter_admin_user``), whose secrets must not reach a log. Plugin names
are redacted as any other logged text (``log_redaction.redact_text``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pluggy

from .log_redaction import redact_text

log = logging.getLogger("newsletter_connector.hooks")


def trace_hook_calls(pm: pluggy.PluginManager) -> Callable[[], None]:
    """Log every hook call ``pm`` makes from now on; returns the function that stops it."""
    # Hook calls nest (an implementation may call another hook) and run on several threads.
    started = threading.local()

    def before(hook_name: str, impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, Any]) -> None:
        started.__dict__.setdefault("stack", []).append(time.perf_counter())

    def after(
        outcome: pluggy.Result[Any],
        hook_name: str,
        impls: Sequence[pluggy.HookImpl],
        kwargs: Mapping[str, Any],
    ) -> None:
        elapsed_ms = (time.perf_counter() - started.stack.pop()) * 1000
        if not log.isEnabledFor(logging.DEBUG):
            return
        plugins = ", ".join(redact_text(impl.plugin_name) for impl in reversed(impls)) or "none"
        log.debug(
            "hook %s: %s from %s in %.2f ms",
            hook_name,
            _result_count(pm, hook_name, outcome),
            plugins,
            elapsed_ms,
        )

    return pm.add_hookcall_monitoring(before, after)


def _result_count(pm: pluggy.PluginManager, hook_name: str, outcome: pluggy.Result[Any]) -> str:
    """``N result(s)``, or ``raised TypeName``: never the results themselves."""
    if outcome.exception is not None:
        return f"raised {type(outcome.exception).__name__}"
    result = outcome.get_result()
    spec = getattr(pm.hook, hook_name).spec
    if spec is not None and spec.opts.get("firstresult"):
        count = 0 if result is None else 1
    else:
        count = len(result)
    return f"{count} result" + ("" if count == 1 else "s")
