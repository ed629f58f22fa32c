"""Tests of ``newsletter_connector.plugins.sql_store``: the built-in SQL store, its
migrations and its databases."""
