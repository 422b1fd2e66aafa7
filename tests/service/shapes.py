"""The field names and leaf types of a scorer's result, compared with a pinned fixture by each scorer's tests."""


def shape(value: object) -> object:
    """Field names and leaf types of a result (lists by their first element)."""
    if isinstance(value, dict):
        return {str(k): shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__
