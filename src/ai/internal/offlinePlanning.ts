/**
 * The offline model's planning (see the header of `OfflineModel.ts`): lexical
 * matching of the request's words against each tool's capability, agent,
 * namespace and description, then the chosen tools' parameters filled from
 * their JSON Schema by the table-driven `FILL_RULES`.
 */
import type { Json, JsonObject } from "../../domain/Json.js"
import { readSection } from "../../domain/PromptSections.js"
import type { RoutingPlanInput } from "../../domain/RoutingPlan.js"
import type { ToolDescriptor } from "../../domain/ToolDescriptor.js"
import { isJsonObject, parseTools } from "./offlinePrompt.js"
import { isCapitalized, isTicker, lowerWords, placePrepositions, rawWords, tokenize } from "./offlineWords.js"

// =============================================================================
// Limits
// =============================================================================

/** At most this many steps per plan. */
const maxSteps = 4

/** How much a matched word counts, by where it matched. */
const weights = { capability: 3, agent: 2, description: 1 } as const

// =============================================================================
// Parameter filling
// =============================================================================

/** A filled value; `found` means the request obviously contains it. */
interface Filled {
  readonly value: Json
  readonly found: boolean
}

interface FillContext {
  readonly request: string
  readonly words: ReadonlyArray<string>
  /** Lowercase words joined by single spaces, padded with a space each side. */
  readonly padded: string
  readonly stems: ReadonlySet<string>
}

/** The JSON Schema type of a property (first non-null one of a type list). */
const typeOf = (schema: JsonObject): string | undefined => {
  const t = schema.type
  if (typeof t === "string") return t
  if (Array.isArray(t)) {
    for (const x of t) if (typeof x === "string" && x !== "null") return x
  }
  return undefined
}

/** Follows local `$ref`s and picks the first non-null `anyOf` / `oneOf` alternative. */
const resolveSchema = (schema: Json | undefined, root: JsonObject, depth = 0): JsonObject | undefined => {
  if (!isJsonObject(schema) || depth > 16) return undefined
  const ref = schema.$ref
  if (typeof ref === "string") {
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref)
    if (match === null) return undefined
    const defs = root[match[1]!]
    return isJsonObject(defs) ? resolveSchema(defs[match[2]!], root, depth + 1) : undefined
  }
  const alternatives = schema.anyOf ?? schema.oneOf
  if (Array.isArray(alternatives)) {
    for (const alternative of alternatives) {
      const resolved = resolveSchema(alternative, root, depth + 1)
      if (resolved !== undefined && typeOf(resolved) !== "null") return resolved
    }
    return undefined
  }
  return schema
}

const mentions = (ctx: FillContext, value: Json): boolean => {
  if (typeof value !== "string" && typeof value !== "number") return false
  const words = lowerWords(String(value))
  if (words.length === 0) return false
  if (ctx.padded.includes(` ${words.join(" ")} `)) return true
  const stems = tokenize(String(value))
  return words.length === 1 && stems.length === 1 && ctx.stems.has(stems[0]!)
}

const firstNumber = (request: string): number | undefined => {
  const match = /(?:^|[^\p{L}\p{N}_.])(-?\d+(?:\.\d+)?)(?![\p{L}\p{N}_])/u.exec(request)
  return match === null ? undefined : Number(match[1])
}

/**
 * Capitalized words following "in" / "to" / "for" / "at". A span that is not
 * ticker-like ("in Paris") wins over one that is ("for ACME").
 */
const placeAfterPreposition = (words: ReadonlyArray<string>): string | undefined => {
  let tickerLike: string | undefined
  for (let i = 0; i < words.length - 1; i++) {
    if (!placePrepositions.has(words[i]!.toLowerCase()) || !isCapitalized(words[i + 1]!)) continue
    const place: Array<string> = []
    for (let j = i + 1; j < words.length && isCapitalized(words[j]!); j++) place.push(words[j]!)
    if (!place.every(isTicker)) return place.join(" ")
    tickerLike ??= place.join(" ")
  }
  return tickerLike
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const nameHas = (name: string, parts: ReadonlyArray<string>): boolean => {
  const lower = name.toLowerCase()
  return parts.some((p) => lower.includes(p))
}

const symbolNames = ["symbol", "ticker", "code"] as const
const placeNames = ["city", "location", "place", "destination"] as const

/**
 * One parameter-filling rule. The first rule that applies to a property
 * fills it; `undefined` means "no value".
 */
interface FillRule {
  readonly name: string
  readonly applies: (property: string, schema: JsonObject) => boolean
  readonly fill: (property: string, schema: JsonObject, ctx: FillContext, root: JsonObject) => Filled | undefined
}

const fillRules: ReadonlyArray<FillRule> = [
  {
    name: "enum: the value right after the property's name (\"to EUR\"), else the mentioned value, else the first",
    applies: (_, s) => Array.isArray(s.enum) || s.const !== undefined,
    fill: (property, s, ctx) => {
      const values: ReadonlyArray<Json> = Array.isArray(s.enum) ? s.enum : s.const !== undefined ? [s.const] : []
      const named = values.find((v) =>
        typeof v === "string" &&
        new RegExp(`\\b${escapeRegExp(property)}\\s+${escapeRegExp(v)}\\b`, "i").test(ctx.request)
      )
      if (named !== undefined) return { value: named, found: true }
      const mentioned = values.find((v) => mentions(ctx, v))
      if (mentioned !== undefined) return { value: mentioned, found: true }
      return values[0] === undefined ? undefined : { value: values[0], found: false }
    }
  },
  {
    name: "number / integer: the first number in the request, else 1",
    applies: (_, s) => typeOf(s) === "number" || typeOf(s) === "integer",
    fill: (_, s, ctx) => {
      const n = firstNumber(ctx.request)
      if (n === undefined) return { value: 1, found: false }
      return { value: typeOf(s) === "integer" ? Math.trunc(n) : n, found: true }
    }
  },
  {
    name: "boolean: false",
    applies: (_, s) => typeOf(s) === "boolean",
    fill: () => ({ value: false, found: false })
  },
  {
    name: "symbol / ticker / code: the first all-caps word of 1-5 letters, else the first capitalized word",
    applies: (p, s) => typeOf(s) === "string" && nameHas(p, symbolNames),
    fill: (_, __, ctx) => {
      const ticker = ctx.words.find(isTicker)
      if (ticker !== undefined) return { value: ticker, found: true }
      const capitalized = ctx.words.slice(1).find(isCapitalized) ?? ctx.words.find(isCapitalized)
      return capitalized === undefined ? undefined : { value: capitalized.toUpperCase(), found: false }
    }
  },
  {
    name: "city / location / place / destination: capitalized words after in/to/for/at",
    applies: (p, s) => typeOf(s) === "string" && nameHas(p, placeNames),
    fill: (_, __, ctx) => {
      const place = placeAfterPreposition(ctx.words)
      if (place !== undefined) return { value: place, found: true }
      const capitalized = ctx.words.slice(1).find(isCapitalized)
      return capitalized === undefined ? undefined : { value: capitalized, found: false }
    }
  },
  {
    name: "other string: the whole request (with step references defused)",
    applies: (_, s) => typeOf(s) === "string",
    // A request that happens to contain "{{steps.x.output}}" must not turn
    // into a step reference (plan validation would reject the plan).
    fill: (_, __, ctx) => ({ value: ctx.request.replace(/\{\{/g, "{ {"), found: false })
  },
  {
    name: "array: empty",
    applies: (_, s) => typeOf(s) === "array",
    fill: () => ({ value: [], found: false })
  },
  {
    name: "object: its own properties, filled the same way",
    applies: (_, s) => typeOf(s) === "object" || isJsonObject(s.properties),
    fill: (_, s, ctx, root) => ({ value: fillObject(s, ctx, root), found: false })
  }
]

/** Fills required properties always and optional ones only when obviously present. */
const fillObject = (schema: JsonObject, ctx: FillContext, root: JsonObject): JsonObject => {
  const properties = isJsonObject(schema.properties) ? schema.properties : {}
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [])
  const out: Record<string, Json> = {}
  for (const [property, raw] of Object.entries(properties)) {
    const resolved = resolveSchema(raw, root)
    if (resolved === undefined) continue
    const rule = fillRules.find((r) => r.applies(property, resolved))
    const filled = rule?.fill(property, resolved, ctx, root)
    if (filled !== undefined && (filled.found || required.has(property))) out[property] = filled.value
  }
  return out
}

const fillParameters = (schema: JsonObject, request: string, stems: ReadonlySet<string>): JsonObject =>
  fillObject(schema, {
    request,
    words: rawWords(request),
    padded: ` ${lowerWords(request).join(" ")} `,
    stems
  }, schema)

// =============================================================================
// Planning
// =============================================================================

interface Candidate {
  readonly tool: ToolDescriptor
  readonly index: number
  readonly score: number
  readonly matched: ReadonlyArray<string>
}

const scoreTool = (request: ReadonlySet<string>, tool: ToolDescriptor, index: number): Candidate | undefined => {
  const seen = new Set<string>()
  const hits = (text: string): ReadonlyArray<string> =>
    tokenize(text).filter((t) => {
      if (!request.has(t) || seen.has(t)) return false
      seen.add(t)
      return true
    })
  // Capability first, so a word counts once and at its highest weight.
  const capability = hits(tool.capability)
  const agent = hits(`${tool.agent} ${tool.namespace}`)
  const description = hits(tool.description)
  const relevant = capability.length >= 1 || description.length >= 2 || (agent.length >= 1 && description.length >= 1)
  if (!relevant) return undefined
  const score = weights.capability * capability.length + weights.agent * agent.length +
    weights.description * description.length
  return { tool, index, score, matched: [...capability, ...agent, ...description] }
}

const emptyPlanReason = "No registered tool matched the request."

/**
 * The plan for a planning or continuation prompt; `OfflineModel.planFromPrompt` documents it.
 *
 * @since 0.1.0
 * @category utils
 */
export const planFromPrompt = (prompt: string): RoutingPlanInput => {
  if (readSection(prompt, "step_results") !== undefined) {
    return { steps: [], terminal: true, reasoning: "Continuation: the offline model never plans a second phase." }
  }
  const tools = parseTools(readSection(prompt, "tools") ?? "")
  const request = readSection(prompt, "user_request") ?? prompt
  const stems = new Set(tokenize(request))
  const chosen = tools
    .flatMap((tool, index) => scoreTool(stems, tool, index) ?? [])
    .sort((a, b) => b.score - a.score || b.matched.length - a.matched.length || a.index - b.index)
    .slice(0, maxSteps)
  if (chosen.length === 0) return { steps: [], terminal: true, reasoning: emptyPlanReason }
  return {
    steps: chosen.map((c, i) => ({
      step_id: `s${i + 1}`,
      namespace: c.tool.namespace,
      agent: c.tool.agent,
      capability: c.tool.capability,
      parameters: fillParameters(c.tool.parameters, request, stems),
      depends_on: [],
      implicit_deps: [],
      metadata: { planner: "offline", score: c.score, matched: c.matched }
    })),
    terminal: true,
    reasoning: `Lexical match on: ${[...new Set(chosen.flatMap((c) => c.matched))].join(", ")}.`
  }
}
