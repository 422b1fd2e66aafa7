"""Form fields generated from an estimator's params JSON Schema (one field per property)."""

import json
from dataclasses import dataclass
from typing import Any, Literal

FieldKind = Literal["integer", "number", "boolean", "enum", "string", "json"]


@dataclass(frozen=True)
class FormField:
    """One input of a params form: ``json`` fields take a JSON value (lists, objects, uploaded-array refs)."""

    name: str
    kind: FieldKind
    required: bool
    default: str
    description: str
    options: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Follow one ``$ref`` into ``$defs``."""
    ref = schema.get("$ref")
    return defs.get(ref.rsplit("/", 1)[-1], {}) if isinstance(ref, str) else schema


def _kind(schema: dict[str, Any], defs: dict[str, Any]) -> tuple[FieldKind, tuple[str, ...]]:
    """The input kind of a property: scalar types get their own input, anything composite is JSON."""
    schema = _resolve(schema, defs)
    if "enum" in schema:
        return "enum", tuple(str(v) for v in schema["enum"])
    if "const" in schema:
        return "enum", (str(schema["const"]),)
    variants = [_resolve(v, defs) for v in schema.get("anyOf", [])]
    non_null = [v for v in variants if v.get("type") != "null"]
    if len(non_null) == 1:
        return _kind(non_null[0], defs)
    if variants:
        return "json", ()
    kind = schema.get("type")
    if kind in ("integer", "number", "boolean", "string"):
        return kind, ()
    return "json", ()


def _default_text(kind: FieldKind, value: Any) -> str:
    """The default as the input shows it (empty when there is none)."""
    if value is None:
        return ""
    if kind == "json":
        return json.dumps(value)
    if kind == "boolean":
        return "true" if value else ""
    return str(value)


def form_fields(params_schema: dict[str, Any]) -> list[FormField]:
    """The inputs of a params form, in the schema's property order."""
    defs = params_schema.get("$defs", {})
    required = set(params_schema.get("required", []))
    out = []
    for name, prop in params_schema.get("properties", {}).items():
        kind, options = _kind(prop, defs)
        resolved = _resolve(prop, defs)
        out.append(
            FormField(
                name=name,
                kind=kind,
                required=name in required,
                default=_default_text(kind, prop.get("default")),
                description=prop.get("description") or resolved.get("description", ""),
                options=options,
                minimum=resolved.get("minimum", resolved.get("exclusiveMinimum")),
                maximum=resolved.get("maximum", resolved.get("exclusiveMaximum")),
            )
        )
    return out
