"""Resolve the dotted field names a result lists in ``reconstructed`` (``curves.bound``, ``localzo.cosine``)."""

import typing

from pydantic import BaseModel


def names_a_field(model: type[BaseModel], dotted: str) -> bool:
    """Whether ``dotted`` walks from ``model`` through nested models (and lists of them) to a declared field."""
    current: object = model
    for part in dotted.split("."):
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or part not in current.model_fields:
            return False
        current = _inner_model(current.model_fields[part].annotation)
    return True


def _inner_model(annotation: object) -> object:
    """The model inside ``X``, ``X | None``, ``list[X]`` or ``list[X] | None``; the annotation itself otherwise."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if isinstance(found, type) and issubclass(found, BaseModel):
            return found
    return annotation
