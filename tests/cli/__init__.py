"""Tests of ``newsletter_connector.cli`` and the settings the commands read."""
