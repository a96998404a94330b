"""JSON answers from LLMs: find the object in a completion and check it against a (small) JSON schema.

The validator covers the subset the project's schemas use: type (object, array, string, number,
integer, boolean, null), properties, required, additionalProperties: false, items, enum, minimum,
maximum, minItems, maxItems. Any violation raises BackendError with the JSON path.
"""

from __future__ import annotations

import json
import math

from ..errors import BackendError

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def extract_json(text: str) -> object:
    """The first complete JSON object or array in `text` (models like to add prose or code fences)."""
    dec = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                obj, _ = dec.raw_decode(text, i)
                return obj
            except json.JSONDecodeError:
                continue
    raise BackendError(f"no JSON object in the answer ({len(text)} chars)")


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(float(v))


def validate(obj: object, schema: dict, path: str = "$") -> None:
    t = schema.get("type")
    if t == "number":
        if not _is_number(obj):
            raise BackendError(f"{path}: expected a number")
    elif t == "integer":
        if not (_is_number(obj) and float(obj).is_integer()):
            raise BackendError(f"{path}: expected an integer")
    elif t in _TYPES and not isinstance(obj, _TYPES[t]):
        raise BackendError(f"{path}: expected {t}")
    if "enum" in schema and obj not in schema["enum"]:
        raise BackendError(f"{path}: {obj!r} not in {schema['enum']}")
    if _is_number(obj):
        if "minimum" in schema and obj < schema["minimum"]:
            raise BackendError(f"{path}: {obj} < minimum {schema['minimum']}")
        if "maximum" in schema and obj > schema["maximum"]:
            raise BackendError(f"{path}: {obj} > maximum {schema['maximum']}")
    if isinstance(obj, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in obj:
                raise BackendError(f"{path}: missing {key!r}")
        if schema.get("additionalProperties") is False:
            extra = set(obj) - set(props)
            if extra:
                raise BackendError(f"{path}: unexpected keys {sorted(extra)}")
        for key, sub in props.items():
            if key in obj:
                validate(obj[key], sub, f"{path}.{key}")
    if isinstance(obj, list):
        if len(obj) < schema.get("minItems", 0) or len(obj) > schema.get("maxItems", len(obj)):
            raise BackendError(f"{path}: {len(obj)} items outside the allowed count")
        if "items" in schema:
            for i, item in enumerate(obj):
                validate(item, schema["items"], f"{path}[{i}]")


def parse(text: str, schema: dict) -> dict:
    """extract_json + validate; the answer must be an object."""
    obj = extract_json(text)
    validate(obj, schema)
    if not isinstance(obj, dict):
        raise BackendError("the answer is not a JSON object")
    return obj


def schema_instruction(schema: dict) -> str:
    return ("Answer with one JSON object only, no prose, matching this JSON schema: "
            + json.dumps(schema, separators=(",", ":")))


def with_instruction(messages: list[dict], schema: dict) -> list[dict]:
    """A copy of `messages` with the schema instruction appended to the system message (or put first)."""
    msgs = [dict(m) for m in messages]
    if msgs and msgs[0].get("role") == "system":
        msgs[0]["content"] = f"{msgs[0].get('content') or ''}\n{schema_instruction(schema)}"
    else:
        msgs.insert(0, {"role": "system", "content": schema_instruction(schema)})
    return msgs
