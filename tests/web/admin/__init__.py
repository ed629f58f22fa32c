"""Tests of ``newsletter_connector.web.admin``: the admin area, through the app and in a browser."""
