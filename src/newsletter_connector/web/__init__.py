"""The HTTP edge: falcon resources that parse, authenticate, call the service and format."""
