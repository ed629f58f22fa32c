"""Tests of ``newsletter_connector.web.pages``: the reader pages (signup, confirm, profile,
unsubscribe, contact)."""
