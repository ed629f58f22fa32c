"""Wire models (pydantic): one module per resource, each the single serializer of its shape."""
