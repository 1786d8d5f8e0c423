/**
 * OpenAI's strict structured-output rules as a walk over a JSON Schema: what
 * a provider sends with `strict: true` must pass it (root an object, every
 * object's properties all `required`, `additionalProperties: false`
 * everywhere, only supported keywords, at most 10 levels of objects).
 */

/** The keywords strict mode supports; anything else is rejected or ignored. */
const STRICT_KEYWORDS = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "enum",
  "const",
  "description",
  "title",
  "pattern",
  "format",
  "$defs",
  "$ref",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf"
])
const MAX_OBJECT_DEPTH = 10

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** Every strict-mode violation in `schema`, each with the JSON pointer (`#/properties/…`) where it is. */
export const strictViolations = (schema: unknown): ReadonlyArray<string> => {
  const out: Array<string> = []
  if (!isRecord(schema) || schema["type"] !== "object") out.push("#: the root must be an object schema")
  if (isRecord(schema) && "anyOf" in schema) out.push("#: the root must not be anyOf")
  const walk = (node: unknown, at: string, depth: number): void => {
    if (!isRecord(node)) {
      out.push(`${at}: not a schema`)
      return
    }
    for (const key of Object.keys(node)) {
      if (!STRICT_KEYWORDS.has(key)) out.push(`${at}: unsupported keyword ${key}`)
    }
    const isObject = node["type"] === "object" || "properties" in node
    if (isObject) {
      if (depth > MAX_OBJECT_DEPTH) out.push(`${at}: objects nested deeper than ${MAX_OBJECT_DEPTH}`)
      if (node["additionalProperties"] !== false) out.push(`${at}: additionalProperties is not false`)
      const properties = isRecord(node["properties"]) ? node["properties"] : {}
      if (!isRecord(node["properties"])) out.push(`${at}: an object without properties`)
      const required = Array.isArray(node["required"]) ? node["required"] : []
      const keys = Object.keys(properties)
      for (const key of keys) if (!required.includes(key)) out.push(`${at}: property ${key} is not required`)
      for (const key of required) {
        if (!keys.includes(String(key))) out.push(`${at}: required ${String(key)} is not a property`)
      }
      for (const [key, value] of Object.entries(properties)) walk(value, `${at}/properties/${key}`, depth + 1)
    }
    if ("items" in node) walk(node["items"], `${at}/items`, depth)
    if (Array.isArray(node["anyOf"])) node["anyOf"].forEach((branch, i) => walk(branch, `${at}/anyOf/${i}`, depth))
    if (isRecord(node["$defs"])) {
      for (const [key, value] of Object.entries(node["$defs"])) walk(value, `${at}/$defs/${key}`, depth)
    }
  }
  walk(schema, "#", 1)
  return out
}
