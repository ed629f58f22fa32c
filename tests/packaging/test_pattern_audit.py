"""Every regular expression under src/ that sees text from outside runs in time linear in it.

The inventory below names each pattern the source compiles or applies, found by walking the
source: a pattern is either audited (it reads request lines, headers, bodies, uploads,
analytics props, imported cells or query parameters, and is run here on adversarial inputs of
64 KB) or listed with the reason it never sees outside text. A new pattern in src/ fails this
test until it joins one of the two lists.

The adversarial inputs repeat one short unit (a letter, a digit, a blank, ``%``, ``@``, ``/``,
a quote, ...), optionally after a prefix that opens a match, and end with a NUL so that no
pattern's closing literal is found: the input on which a backtracking engine retries a long
match from every start. Each is run at 4 KB first (a quadratic pattern shows there without
holding the run for minutes), then at 64 KB, and measured in CPU time so that a loaded machine
does not decide the result.
"""

from __future__ import annotations

import ast
import importlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.support.paths import ROOT

# Reads every source file and runs some two thousand 64 KB matches
pytestmark = [pytest.mark.system, pytest.mark.database_independent]

SRC = ROOT / "src" / "newsletter_connector"
PACKAGE = "newsletter_connector"
RE_FUNCTIONS = frozenset(
    {"compile", "match", "fullmatch", "search", "sub", "subn", "split"} | {"findall", "finditer"}
)

#: A linear scan of 64 KB takes about a millisecond; a quadratic one, seconds to minutes.
SMALL, LARGE = 4 * 1024, 64 * 1024
SMALL_LIMIT, LARGE_LIMIT = 0.05, 0.5  # CPU seconds

UNITS = ("a", "A", "0", " ", "\t", ".", "-", "_", "%", "%2", "%25", "@", "/", "\\", '"', "'")
UNITS += ("(", "{", "[", "+", ";", ",", "=", "a@", "a.", "0 ", "0-", '\\"', "/a", "@a", "a%40")
PREFIXES = ("", '"', "0", "a@", "/profile/", "/api/campaigns/")


@dataclass(frozen=True)
class Audited:
    """A pattern that reads outside text; ``whole`` if the code only matches it from the
    start (``match``/``fullmatch``), else it is scanned (``search``, ``sub``, ``finditer``)."""

    pattern: Callable[[], re.Pattern[str]]
    whole: bool = False


@dataclass(frozen=True)
class Inside:
    """A pattern that never sees outside text, and why."""

    why: str


def attr(module: str, name: str) -> Callable[[], re.Pattern[str]]:
    return lambda: getattr(importlib.import_module(f"{PACKAGE}.{module}"), name)


def literal(source: str, flags: int = 0) -> Callable[[], re.Pattern[str]]:
    return lambda: re.compile(source, flags)


def sink(prefix: str, tail: str) -> Callable[[], re.Pattern[str]]:
    return lambda: re.compile(re.escape(prefix) + tail)


MIGRATION = "the data migration's own copy, run once over stored rows that capture already bounded"

#: (file under src/newsletter_connector, the module-level name the pattern is bound to, or the
#: first argument's source text for a pattern applied inline) -> what it reads.
INVENTORY: dict[tuple[str, str], Audited | Inside] = {
    ("model/requests.py", "_PRINTABLE_RE"): Audited(attr("model.requests", "_PRINTABLE_RE"), True),
    ("model/issue.py", "SLUG_PATTERN"): Audited(attr("model.issue", "SLUG_PATTERN"), True),
    ("model/issue.py", "_DATE_PATTERN"): Audited(attr("model.issue", "_DATE_PATTERN"), True),
    ("model/issue.py", 'r"^(Input|String|Value) should( be)?"'): Inside(
        "pydantic's own error messages, anchored at their start"
    ),
    ("model/contact.py", "_EMAIL_RE"): Audited(attr("model.contact", "_EMAIL_RE"), True),
    ("model/contact.py", "_ZIP_RE"): Audited(attr("model.contact", "_ZIP_RE"), True),
    ("model/contact.py", "_PRINTABLE_RE"): Audited(attr("model.contact", "_PRINTABLE_RE"), True),
    ("model/contact.py", "_PHONE_RE"): Audited(attr("model.contact", "_PHONE_RE"), True),
    ("model/contact.py", "_LINK_TOKEN"): Audited(attr("model.contact", "_LINK_TOKEN")),
    ("model/wire_safe.py", "_SURROGATE"): Audited(attr("model.wire_safe", "_SURROGATE")),
    ("model/feedback.py", "_ID_RE"): Audited(attr("model.feedback", "_ID_RE"), True),
    ("i18n.py", "_RANGE"): Audited(attr("i18n", "_RANGE"), True),
    ("tracing/statements.py", "_STRING_LITERAL"): Inside(
        "our own SQL statements, whose values travel as bound parameters"
    ),
    ("tracing/statements.py", "_NUMBER_LITERAL"): Inside("our own SQL statements"),
    ("tracing/statements.py", "_OPERATION"): Inside("our own SQL statements"),
    ("web/params.py", "_ISO_DATE"): Audited(attr("web.params", "_ISO_DATE"), True),
    ("web/params.py", "_DECIMAL"): Audited(attr("web.params", "_DECIMAL"), True),
    ("web/params.py", "_SIGNED_DECIMAL"): Audited(attr("web.params", "_SIGNED_DECIMAL"), True),
    ("web/admin/csrf.py", "_TOKEN_RE"): Audited(attr("web.admin.csrf", "_TOKEN_RE"), True),
    ("web/admin/subscriber_filter.py", "_ZIP_PREFIX"): Audited(
        attr("web.admin.subscriber_filter", "_ZIP_PREFIX"), True
    ),
    ("web/admin/door.py", 're.escape(ROOT) + r"(?=/|\\Z)"'): Audited(
        sink("/admin", r"(?=/|\Z)"), True
    ),
    ("web/admin/issue_draft.py", "_NOT_SLUG"): Audited(attr("web.admin.issue_draft", "_NOT_SLUG")),
    ("web/admin/input.py", "_SINGLE_LINE_BAD"): Audited(
        attr("web.admin.input", "_SINGLE_LINE_BAD")
    ),
    ("web/admin/input.py", "_MULTI_LINE_BAD"): Audited(attr("web.admin.input", "_MULTI_LINE_BAD")),
    ("web/listsource.py", "_CAMPAIGN_PATH"): Audited(
        attr("web.listsource", "_CAMPAIGN_PATH"), True
    ),
    ("web/listsource.py", 're.escape(prefix) + r"(?=/|\\Z)"'): Audited(
        sink("/api/listsource", r"(?=/|\Z)"), True
    ),
    ("web/unknown_paths.py", '""'): Audited(literal(""), True),
    ("web/export.py", 're.escape(prefix) + r"(?=/|$)"'): Audited(
        sink("/api/export", r"(?=/|$)"), True
    ),
    ("web/pages/csrf.py", "_NONCE_RE"): Audited(attr("web.pages.csrf", "_NONCE_RE"), True),
    ("web/pages/csrf.py", "_TOKEN_RE"): Audited(attr("web.pages.csrf", "_TOKEN_RE"), True),
    ("storage/transport.py", "_HEADER_TOKEN"): Inside("the operator's own connection settings"),
    ("service/importing/_words.py", "_NAME"): Audited(attr("service.importing._words", "_NAME")),
    ("service/analytics_sanitize.py", "ID_PATTERN"): Audited(
        attr("service.analytics_sanitize", "ID_PATTERN"), True
    ),
    ("service/analytics_sanitize.py", "PROP_KEY_PATTERN"): Audited(
        attr("service.analytics_sanitize", "PROP_KEY_PATTERN"), True
    ),
    ("service/analytics_sanitize.py", "_EMAIL"): Audited(
        attr("service.analytics_sanitize", "_EMAIL")
    ),
    ("service/analytics_sanitize.py", "_PHONE_CANDIDATE"): Audited(
        attr("service.analytics_sanitize", "_PHONE_CANDIDATE")
    ),
    ("service/analytics_sanitize.py", "_ISO_DATE"): Audited(
        attr("service.analytics_sanitize", "_ISO_DATE"), True
    ),
    ("service/analytics_sanitize.py", "_TOKEN_LIKE_WORD"): Audited(
        attr("service.analytics_sanitize", "_TOKEN_LIKE_WORD")
    ),
    ("service/analytics_sanitize.py", "_PROP_CONTROLS"): Audited(
        attr("service.analytics_sanitize", "_PROP_CONTROLS")
    ),
    ("service/analytics_sanitize.py", 'r"[a-z][a-z0-9+.-]*"'): Audited(
        literal(r"[a-z][a-z0-9+.-]*"), True
    ),
    ("service/subscribers.py", "_TOKEN_RE"): Audited(
        attr("service.subscribers", "_TOKEN_RE"), True
    ),
    ("log_redaction.py", "_TOKEN_PATH"): Audited(attr("log_redaction", "_TOKEN_PATH")),
    ("log_redaction.py", "_TOKEN_SHAPE"): Audited(attr("log_redaction", "_TOKEN_SHAPE")),
    ("log_redaction.py", "_API_KEY"): Audited(attr("log_redaction", "_API_KEY")),
    ("log_redaction.py", "_CLIENT_IP"): Audited(attr("log_redaction", "_CLIENT_IP")),
    ("log_redaction.py", "_QUERY"): Audited(attr("log_redaction", "_QUERY")),
    ("log_redaction.py", "_CONTROL"): Audited(attr("log_redaction", "_CONTROL")),
    ("log_redaction.py", "_SECRET_NAME"): Audited(attr("log_redaction", "_SECRET_NAME")),
    ("log_redaction.py", "_PERCENT_RUN"): Audited(attr("log_redaction", "_PERCENT_RUN")),
    ("log_redaction.py", "_FORMAT_ATOM"): Inside("the operator's own access-log format"),
    ("plugins/html_renderer.py", "_ADJACENT_BRACES"): Audited(
        attr("plugins.html_renderer", "_ADJACENT_BRACES")
    ),
    ("plugins/sql_store/failure_reason.py", "pattern"): Audited(
        lambda: importlib.import_module(
            f"{PACKAGE}.plugins.sql_store.failure_reason"
        )._secret_pattern("s3cret-password-of-the-database")
    ),
    ("plugins/sql_store/migrations/versions/0015_redact_token_spellings.py", "_TOKEN_PATH"): Inside(
        MIGRATION
    ),
    (
        "plugins/sql_store/migrations/versions/0015_redact_token_spellings.py",
        "_PERCENT_RUN",
    ): Inside(MIGRATION),
    (
        "plugins/sql_store/migrations/versions/0015_redact_token_spellings.py",
        "_TOKEN_LIKE_WORD",
    ): Inside(MIGRATION),
    ("plugins/sql_store/migrations/versions/0006_repair_analytics_rows.py", "_TOKEN_PATH"): Inside(
        MIGRATION
    ),
    ("plugins/sql_store/migrations/versions/0006_repair_analytics_rows.py", "_PERCENT_RUN"): Inside(
        MIGRATION
    ),
    ("plugins/sql_store/migrations/versions/0006_repair_analytics_rows.py", "_SURROGATE"): Inside(
        MIGRATION
    ),
}


def _is_re_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in RE_FUNCTIONS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "re"
        and bool(node.args)
    )


def patterns_in_source() -> set[tuple[str, str]]:
    """Each ``re.<function>(...)`` call under src/, keyed as INVENTORY keys it: by the name it
    is assigned to (``X = re.compile(...)``, ``self.x = ...``, ``return re.compile(x)``: the
    argument's text), else by its first argument's source text."""
    found: set[tuple[str, str]] = set()
    for path in sorted(SRC.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        named: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                if (
                    _is_re_call(node.value)
                    and isinstance(target, ast.Name)
                    and node.value.func.attr == "compile"
                ):  # type: ignore[attr-defined]
                    found.add((path.relative_to(SRC).as_posix(), target.id))
                    named.add(id(node.value))
        for node in ast.walk(tree):
            if _is_re_call(node) and id(node) not in named:
                argument = ast.get_source_segment(source, node.args[0])  # type: ignore[attr-defined]
                found.add((path.relative_to(SRC).as_posix(), argument or ""))
    return found


def test_every_pattern_in_the_source_is_in_the_inventory_and_no_other() -> None:
    found = patterns_in_source()
    missing = sorted(found - INVENTORY.keys())
    gone = sorted(INVENTORY.keys() - found)
    assert not missing, (
        f"patterns in src/ that this audit does not list (audit them or say why not): {missing}"
    )
    assert not gone, f"patterns this audit lists that src/ no longer has: {gone}"


def adversarial(size: int) -> list[str]:
    inputs = []
    for prefix in PREFIXES:
        for unit in UNITS:
            run = (unit * (size // len(unit) + 1))[: size - len(prefix) - 1]
            inputs.append(prefix + run + "\x00")
    return inputs


def cpu_seconds(apply: Callable[[str], object], text: str) -> float:
    began = time.process_time()
    apply(text)
    return time.process_time() - began


AUDITED = sorted((key for key, entry in INVENTORY.items() if isinstance(entry, Audited)), key=str)


@pytest.mark.parametrize("key", AUDITED, ids=["::".join(key) for key in AUDITED])
def test_each_pattern_on_outside_text_takes_linear_time_on_64_kb_built_to_defeat_it(
    key: tuple[str, str],
) -> None:
    entry = INVENTORY[key]
    assert isinstance(entry, Audited)
    pattern = entry.pattern()
    if entry.whole:
        applications: list[Callable[[str], object]] = [pattern.match, pattern.fullmatch]
    else:
        applications = [
            lambda text: list(pattern.finditer(text)),
            lambda text: pattern.sub("", text),
        ]
    slow = []
    for size, limit in ((SMALL, SMALL_LIMIT), (LARGE, LARGE_LIMIT)):
        for text in adversarial(size):
            for apply in applications:
                seconds = cpu_seconds(apply, text)
                if seconds > limit:  # once more: a linear scan is never slow twice
                    seconds = min(seconds, cpu_seconds(apply, text), cpu_seconds(apply, text))
                if seconds > limit:
                    slow.append(f"{size // 1024} KB of {text[:20]!r}...: {seconds:.2f} s")
        if slow:
            break  # a quadratic pattern is not tried at 64 KB: it would take minutes
    assert not slow, f"{key} takes more than linear time: {slow[:5]}"


def test_the_capture_nesting_count_reads_each_character_once() -> None:
    """Analytics capture counts a body's nesting before parsing it with a one-pass scan, not a
    pattern: an unclosed string of escaped quotes cost a pattern time quadratic in it."""
    from newsletter_connector.web.analytics_capture import nesting_depth

    for text in adversarial(LARGE):
        assert cpu_seconds(nesting_depth, text) < LARGE_LIMIT, text[:20]
    assert nesting_depth('{"a": [{"b": "[[[{"}], "c": "\\"{"}') == 3
    assert nesting_depth('{"a": "unclosed [[[[') == 1


def test_the_audit_catches_a_quadratic_pattern() -> None:
    """The measure itself: a pattern known to be quadratic on a long run without ``@`` is
    caught at 4 KB."""
    quadratic = re.compile(r"[^\s@]+@[^\s@]+")
    text = next(t for t in adversarial(SMALL) if t.startswith("a" * 10))
    seconds = max(cpu_seconds(lambda x: list(quadratic.finditer(x)), text) for _ in range(2))
    linear = re.compile(r"@[^\s@]+")
    assert cpu_seconds(lambda x: list(linear.finditer(x)), text) < SMALL_LIMIT
    assert seconds > SMALL_LIMIT / 5, f"a known quadratic pattern took only {seconds:.4f} s at 4 KB"


def test_the_inventory_names_real_files() -> None:
    assert all((SRC / path).is_file() for path, _ in INVENTORY)
