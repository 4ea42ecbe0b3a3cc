#!/usr/bin/env node
// Generates src/models.ts from the server's openapi.json.
//
//     node clients/typescript/tools/generate-models.mjs            # rewrite src/models.ts
//     node clients/typescript/tools/generate-models.mjs --check    # exit 1 when src/models.ts is stale
//
// Only the schemas the client sends or returns are generated (SCHEMAS and OPERATIONS below), each as
// an interface with the wire's field names (already camelCase). Answers are readonly; a field the
// schema does not require is optional (`?:`), a nullable one is `| null`. An enum of an answer also
// admits other strings, since the server may add values (docs/guide/server.md, Versions); an enum of
// a request is strict. The TypeScript twin of clients/python/tools/generate_models.py.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
export const OPENAPI = normalize(join(HERE, "..", "..", "..", "boxline-server", "src", "main", "resources",
  "io", "boxline", "server", "openapi.json"));
export const TARGET = normalize(join(HERE, "..", "src", "models.ts"));

// Component schemas, in the order they are written.
const SCHEMAS = ["Caller", "Topic", "TopicCreate", "Subscription", "SubscriptionCreate", "Lag", "SubscriptionLag",
  "Event", "OutgoingEvent", "OutgoingBatch", "PublishResult", "Delivery", "Settlement", "DeadLetter", "Error"];
// Inline objects get these names: "schema.property" -> interface.
const INLINE = { "PublishResult.results": "Published", "Error.refused": "PartitionRef",
  "Batch.partitions": "PartitionRef" };
// Bodies described inline under an operation: interface -> [operationId, "request" or "200"].
const OPERATIONS = { Batch: ["fetch", "200"], FetchRequest: ["fetch", "request"],
  SettleRequest: ["settle", "request"] };
// What the client sends: plain fields and strict enums. Everything else is an answer.
const REQUESTS = new Set(["TopicCreate", "SubscriptionCreate", "OutgoingEvent", "OutgoingBatch", "Settlement",
  "FetchRequest", "SettleRequest"]);

const SCALARS = { string: "string", integer: "number", number: "number", boolean: "boolean" };

function operation(spec, operationId, part) {
  for (const methods of Object.values(spec.paths)) {
    for (const op of Object.values(methods)) {
      if (op && typeof op === "object" && op.operationId === operationId) {
        const body = part === "request" ? op.requestBody : op.responses[part];
        return body.content["application/json"].schema;
      }
    }
  }
  throw new Error("openapi.json has no operation " + operationId);
}

function comment(text, indent) {
  const lines = String(text).trim().replace(/\*\//g, "*\\/").split("\n");
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? " " + l : ""}`).join("\n")}\n${indent} */\n`;
}

class Generator {
  constructor(spec) {
    this.spec = spec;
    this.interfaces = []; // [name, source], in definition order
    this.defined = new Set();
  }

  fieldType(owner, prop, schema, request) {
    if (schema.$ref) return schema.$ref.split("/").pop();
    const kind = schema.type;
    if (kind === "array") {
      const item = this.fieldType(owner, prop, schema.items, request);
      return /[ |]/.test(item) ? `Array<${item}>` : `${item}[]`;
    }
    if (kind === "object" && schema.properties) {
      const name = INLINE[`${owner}.${prop}`];
      if (!name) throw new Error(`openapi.json: ${owner}.${prop} is an inline object without a name in INLINE`);
      this.define(name, schema, request);
      return name;
    }
    if (kind === "object") {
      const extra = schema.additionalProperties;
      const value = extra && typeof extra === "object" ? SCALARS[extra.type] ?? "unknown" : "unknown";
      return `Record<string, ${value}>`;
    }
    if (kind === "string" && Array.isArray(schema.enum)) {
      const values = schema.enum.map((v) => JSON.stringify(v));
      return request ? values.join(" | ") : [...values, "(string & {})"].join(" | ");
    }
    return SCALARS[kind] ?? "unknown";
  }

  define(name, schema, request = REQUESTS.has(name)) {
    if (this.defined.has(name)) return;
    this.defined.add(name);
    const required = new Set(schema.required ?? []);
    const doc = (schema.description ?? "").split("\n")[0] || `The ${name} JSON object.`;
    let src = comment(doc, "") + `export interface ${name} {\n`;
    for (const [prop, sub] of Object.entries(schema.properties ?? {})) {
      let type = this.fieldType(name, prop, sub, request);
      if (sub.nullable && type !== "unknown") type += " | null";
      if (sub.description) src += comment(sub.description, "  ");
      src += `  ${request ? "" : "readonly "}${prop}${required.has(prop) ? "" : "?"}: ${type};\n`;
    }
    src += "}\n";
    this.interfaces.push([name, src]);
  }

  generate() {
    const schemas = this.spec.components.schemas;
    for (const name of SCHEMAS) {
      if (!schemas[name]) throw new Error("openapi.json has no schema " + name);
      this.define(name, schemas[name]);
    }
    for (const [name, [operationId, part]] of Object.entries(OPERATIONS)) {
      this.define(name, operation(this.spec, operationId, part));
    }
    const names = this.interfaces.map(([n]) => n).sort();
    return HEADER + `export type ModelName =\n${names.map((n) => `  | ${JSON.stringify(n)}`).join("\n")};\n`
      + this.interfaces.map(([, src]) => "\n" + src).join("");
  }
}

const HEADER = `// Typed bodies of the Boxline server API.
//
// GENERATED by tools/generate-models.mjs from boxline-server's openapi.json: do not edit by hand;
// run \`node clients/typescript/tools/generate-models.mjs\` after the API description changes.
// Answers may carry fields not listed here (a newer server): they are there at run time, untyped.

`;

export function render() {
  return new Generator(JSON.parse(readFileSync(OPENAPI, "utf8"))).generate();
}

function main(argv) {
  const text = render();
  if (argv.includes("--check")) {
    let current = null;
    try {
      current = readFileSync(TARGET, "utf8");
    } catch {
      // missing: stale
    }
    if (current !== text) {
      console.error("src/models.ts is stale: run node clients/typescript/tools/generate-models.mjs");
      return 1;
    }
    return 0;
  }
  writeFileSync(TARGET, text);
  console.log("wrote " + TARGET);
  return 0;
}

if (process.argv[1] && normalize(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
