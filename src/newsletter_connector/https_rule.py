"""The https rule for the two addresses whose URLs leave the site (``base_url``, readers'
links; ``platform_base``, pushed contact records): ``https`` in any case, plain ``http`` only
with the development setting named for it. Credentials in an address are refused, and
:func:`without_credentials` is the only form in which one is shown.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def scheme_allowed(url: str, *, allow_http: bool) -> bool:
    """Whether ``url``'s scheme is https (any case), or http while ``allow_http`` is on."""
    scheme = urlsplit(url).scheme  # urlsplit lowercases the scheme
    return scheme == "https" or (allow_http and scheme == "http")


def with_lowercase_scheme(url: str) -> str:
    """``url`` with its scheme in lower case (``HTTPS://x`` → ``https://x``), else unchanged."""
    scheme, colon, rest = url.partition(":")
    return scheme.lower() + colon + rest if colon else url


def carries_credentials(url: str) -> bool:
    """Whether ``url``'s authority holds a user name (with or without a password)."""
    return "@" in urlsplit(url).netloc


def without_credentials(url: str) -> str:
    """``url`` with any ``user[:password]@`` removed: the only form in which an address is
    printed, logged or put in a ``repr``."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
