"""What the tests share: servers and receivers they start, helpers that drive the surfaces,
shapes they compare against, and waiting for a condition instead of sleeping."""
