#!/usr/bin/env python3
"""Generates boxline/models.py from the server's openapi.json.

    python3 clients/python/tools/generate_models.py            # rewrite models.py
    python3 clients/python/tools/generate_models.py --check    # exit 1 when models.py is stale

Only the schemas the client returns are generated (SCHEMAS below), each as a frozen dataclass with
snake_case fields, a from_json() that ignores fields it does not know (so a newer server does not
break an older client) and a to_json() that leaves out unset optional fields.
"""
import json
import keyword
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OPENAPI = os.path.join(HERE, "..", "..", "..", "boxline-server", "src", "main", "resources",
                       "io", "boxline", "server", "openapi.json")
TARGET = os.path.join(HERE, "..", "boxline", "models.py")

# Component schemas, in dependency order (a class is defined before a class that uses it).
SCHEMAS = ["Caller", "Topic", "Subscription", "Lag", "SubscriptionLag", "Event", "OutgoingEvent",
           "PublishResult", "Delivery", "Settlement", "DeadLetter", "Error"]
# Inline objects get these class names: (schema, property) -> class.
INLINE = {("PublishResult", "results"): "Published", ("Error", "refused"): "PartitionRef",
          ("Batch", "partitions"): "PartitionRef"}
# Answers described inline under an operation: class -> operationId (its 200 answer).
OPERATIONS = {"Batch": "fetch"}

SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}


def snake(name):
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return s + "_" if keyword.iskeyword(s) else s


def operation_schema(spec, operation_id):
    for methods in spec["paths"].values():
        for op in methods.values():
            if isinstance(op, dict) and op.get("operationId") == operation_id:
                return op["responses"]["200"]["content"]["application/json"]["schema"]
    raise SystemExit("openapi.json has no operation " + operation_id)


class Generator:
    def __init__(self, spec):
        self.spec = spec
        self.classes = []  # (name, source), in definition order
        self.defined = set()

    def field_type(self, owner, prop, schema):
        """(annotation, converter expression on `v`, or None when the JSON value is used as is)."""
        if "$ref" in schema:
            ref = schema["$ref"].rsplit("/", 1)[1]
            return ref, ref + ".from_json(v)"
        kind = schema.get("type")
        if kind == "array":
            item_type, conv = self.field_type(owner, prop, schema["items"])
            if conv is None:
                return "List[%s]" % item_type, None
            return "List[%s]" % item_type, "[%s for x in v]" % conv.replace("(v)", "(x)")
        if kind == "object" and "properties" in schema:
            name = INLINE[(owner, prop)]
            self.define(name, schema)
            return name, name + ".from_json(v)"
        if kind == "object":
            extra = schema.get("additionalProperties")
            value = SCALARS.get(extra.get("type"), "Any") if isinstance(extra, dict) else "Any"
            return "Dict[str, %s]" % value, None
        if kind in SCALARS:
            return SCALARS[kind], None
        return "Any", None

    def define(self, name, schema):
        if name in self.defined:
            return
        self.defined.add(name)
        required = set(schema.get("required", []))
        fields = []
        for prop, sub in schema["properties"].items():
            annotation, conv = self.field_type(name, prop, sub)
            fields.append((prop, snake(prop), annotation, conv, prop in required, sub))
        # Dataclass fields with a default must come after those without.
        fields.sort(key=lambda f: not f[4])
        lines = ["", "", "@dataclass(frozen=True)", "class %s:" % name]
        doc = schema.get("description", "").split("\n")[0] or "The %s JSON object." % name
        lines.append('    """%s"""' % doc.replace('"""', "'''").replace("\\", "\\\\"))
        lines.append("")
        for prop, attr, annotation, conv, req, sub in fields:
            if req and not sub.get("nullable"):
                lines.append("    %s: %s" % (attr, annotation))
            elif req:
                lines.append("    %s: Optional[%s]" % (attr, annotation))
            else:
                lines.append("    %s: Optional[%s] = None" % (attr, annotation))
        lines += ["", "    @classmethod", "    def from_json(cls, d: Dict[str, Any]) -> %r:" % name,
                  "        return cls("]
        for prop, attr, annotation, conv, req, sub in fields:
            if conv is None:
                lines.append("            %s=d.get(%r)," % (attr, prop))
            else:
                lines.append("            %s=_map(d.get(%r), lambda v: %s)," % (attr, prop, conv))
        lines += ["        )", "", "    def to_json(self) -> Dict[str, Any]:",
                  "        return _strip({"]
        for prop, attr, annotation, conv, req, sub in fields:
            lines.append("            %r: _unwrap(self.%s)," % (prop, attr))
        lines += ["        }, %r)" % sorted(p for p, *_rest in fields if p in required)]
        self.classes.append((name, "\n".join(lines)))

    def generate(self):
        schemas = self.spec["components"]["schemas"]
        for name in SCHEMAS:
            self.define(name, schemas[name])
        for name, operation_id in OPERATIONS.items():
            self.define(name, operation_schema(self.spec, operation_id))
        names = sorted(n for n, _ in self.classes)
        head = HEADER + "__all__ = [%s]\n" % ", ".join(repr(n) for n in names)
        return head + "".join(src + "\n" for _, src in self.classes)


HEADER = '''"""Typed answers of the Boxline server API.

GENERATED by tools/generate_models.py from boxline-server's openapi.json: do not edit by hand;
run `python3 clients/python/tools/generate_models.py` after the API description changes.
"""
from dataclasses import dataclass, is_dataclass
from typing import Any, Callable, Dict, List, Optional


def _map(v: Any, f: Callable[[Any], Any]) -> Any:
    return None if v is None else f(v)


def _unwrap(v: Any) -> Any:
    if is_dataclass(v):
        return v.to_json()
    if isinstance(v, list):
        return [_unwrap(x) for x in v]
    return v


def _strip(d: Dict[str, Any], required: List[str]) -> Dict[str, Any]:
    # Unset optional fields are left out: the server refuses some fields as null.
    return {k: v for k, v in d.items() if v is not None or k in required}


'''


def render():
    with open(OPENAPI, encoding="utf-8") as f:
        return Generator(json.load(f)).generate()


def main(argv):
    text = render()
    if "--check" in argv:
        with open(TARGET, encoding="utf-8") as f:
            if f.read() != text:
                print("boxline/models.py is stale: run python3 clients/python/tools/generate_models.py")
                return 1
        return 0
    with open(TARGET, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote " + os.path.normpath(TARGET))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
