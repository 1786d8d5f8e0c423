/**
 * Lenient Responses decoding (issue 19): `@effect/ai-openai` 0.41 decodes a
 * `/v1/responses` body with OpenAI's own `Response` Schema (Generated.ts),
 * which requires keys that vLLM, Ollama (0.13.3–0.14.1), llama.cpp, LM
 * Studio and LiteLLM's bridge leave out; its stream drops every event it
 * cannot decode. This module says what is filled in — before that decoder
 * runs (lenientResponses.ts applies it to the OpenAI client's answers) —
 * each omitted key whose absence means nothing, with the value OpenAI's
 * Schema has for "nothing":
 *
 * - a Response: `error`, `incomplete_details`, `instructions`, `metadata`,
 *   `temperature`, `top_p` → `null`; `tools` → `[]`; `tool_choice` →
 *   `"auto"`; `parallel_tool_calls` → `true` (the Schema's own default);
 *   `object: "chat.completion"` (LiteLLM before PR #26327) → `"response"`;
 *   `usage.input_tokens_details` / `output_tokens_details` absent or `null`
 *   → zero counts, `usage.total_tokens` → input + output;
 * - an output message: a missing `id` → `msg_<output index>`; an
 *   `output_text` part's `annotations` → `[]`; a part whose `text` is
 *   `null` (LiteLLM's bridge next to tool calls) is dropped;
 * - a stream event: `sequence_number` (a running count), `output_index`,
 *   `content_index`, `item_id` (from the items seen so far), an item's `id`
 *   (`msg_<i>` / `item_<i>`); an embedded Response as above, its `output`
 *   `[]` while in progress, and — lean ones carry neither — its
 *   `created_at` (from the stream, else the HTTP `Date`, else the clock) and
 *   `model` (from the stream, else the request's `model`).
 *
 * Nothing else: content is never made up. A body that is not a Response
 * (not JSON, `output` not a list, a Chat Completions body) and an event
 * that is not JSON pass on as they came, so the client's typed errors
 * report them. A complete body or event is handed on byte for byte.
 *
 * Bounds: a body (or one SSE event) over {@link normalizedBodyBytes} is not
 * parsed, and one nested deeper than {@link normalizedDepth} is not
 * re-serialized (`JSON.stringify` recurses; `JSON.parse` does not): either
 * passes on as it came. The depth is counted only for what was filled, so a
 * complete body costs one `JSON.parse`. An SSE event is held in memory up
 * to that size; a longer one streams through untouched.
 */
import { maxDepth } from "../../domain/Json.js"
import { exceeds } from "./outputBounds.js"

/**
 * The largest body (or SSE event) that is parsed to be filled in: 8 MiB —
 * eight times `ModelPolicy`'s default `maxOutputBytes`, room for a whole
 * answer JSON-escaped next to echoed instructions and tools.
 *
 * @since 0.1.0
 * @category constants
 */
export const normalizedBodyBytes = 8_388_608

/**
 * The deepest body (or SSE event) that is re-serialized once filled:
 * `Json.maxDepth` (256).
 *
 * @since 0.1.0
 * @category constants
 */
export const normalizedDepth = maxDepth

type Obj = Record<string, unknown>

const isObj = (u: unknown): u is Obj => typeof u === "object" && u !== null && !Array.isArray(u)
const has = (o: Obj, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key)

/** Where a Response's `created_at` and `model` come from when it has none. */
export interface Fallbacks {
  readonly createdAt: () => number
  readonly model: () => string | undefined
}

/** The value of each omitted Response key that means "none" (Generated.ts `Response`). */
const ABSENT: ReadonlyArray<readonly [string, () => unknown]> = [
  ["error", () => null],
  ["incomplete_details", () => null],
  ["instructions", () => null],
  ["metadata", () => null],
  ["temperature", () => null],
  ["top_p", () => null],
  ["tools", () => []],
  ["tool_choice", () => "auto"],
  ["parallel_tool_calls", () => true]
]

/** A Response (or LiteLLM's mislabelled one): an `id` and `object: "response"`. */
const isResponse = (o: Obj): boolean =>
  typeof o["id"] === "string" &&
  (o["object"] === "response" || (o["object"] === "chat.completion" && !has(o, "choices")))

const synthesizedId = (item: Obj, index: number): string => `${item["type"] === "message" ? "msg" : "item"}_${index}`

const fillDetails = (usage: Obj, key: string, count: string): boolean => {
  const details = usage[key]
  if (details === undefined || details === null) {
    usage[key] = { [count]: 0 }
    return true
  }
  if (isObj(details) && !has(details, count)) {
    details[count] = 0
    return true
  }
  return false
}

const fillUsage = (usage: Obj): boolean => {
  let changed = fillDetails(usage, "input_tokens_details", "cached_tokens")
  if (fillDetails(usage, "output_tokens_details", "reasoning_tokens")) changed = true
  const input = usage["input_tokens"]
  const output = usage["output_tokens"]
  if (!has(usage, "total_tokens") && typeof input === "number" && typeof output === "number") {
    usage["total_tokens"] = input + output
    changed = true
  }
  return changed
}

/** An `output_text` content part: `annotations` absent or `null` → `[]`. */
const fillPart = (part: Obj): boolean => {
  if (part["type"] !== "output_text" || (has(part, "annotations") && part["annotations"] !== null)) return false
  part["annotations"] = []
  return true
}

/**
 * An output item: a message's `id` (required) and content parts; in a
 * stream, any item's `id` (events refer to it).
 */
const fillItem = (item: Obj, id: () => string, anyId: boolean): boolean => {
  let changed = false
  const isMessage = item["type"] === "message"
  if (!has(item, "id") && (isMessage || anyId)) {
    item["id"] = id()
    changed = true
  }
  const content = item["content"]
  if (isMessage && Array.isArray(content)) {
    const kept = content.filter((part) => !(isObj(part) && part["type"] === "output_text" && part["text"] === null))
    if (kept.length !== content.length) {
      item["content"] = kept
      changed = true
    }
    for (const part of kept) if (isObj(part) && fillPart(part)) changed = true
  }
  return changed
}

/** Fills a Response's omitted keys in place (see the module comment); whether it changed. */
const fillResponse = (response: Obj, fallbacks: Fallbacks, ids: (index: number) => string | undefined): boolean => {
  let changed = false
  if (response["object"] === "chat.completion") {
    response["object"] = "response"
    changed = true
  }
  for (const [key, none] of ABSENT) {
    if (!has(response, key)) {
      response[key] = none()
      changed = true
    }
  }
  if (!has(response, "created_at")) {
    response["created_at"] = fallbacks.createdAt()
    changed = true
  }
  if (!has(response, "model")) {
    const model = fallbacks.model()
    if (model !== undefined) {
      response["model"] = model
      changed = true
    }
  }
  if (isObj(response["usage"]) && fillUsage(response["usage"])) changed = true
  const output = response["output"]
  if (Array.isArray(output)) {
    output.forEach((item, index) => {
      if (isObj(item) && fillItem(item, () => ids(index) ?? synthesizedId(item, index), false)) changed = true
    })
  }
  return changed
}

/** JSON worth parsing: an object, within the size bound. */
const parseable = (text: string): boolean => /^\s*\{/.test(text) && !exceeds(text, normalizedBodyBytes)

/**
 * Whether a parsed value nests deeper than `limit` — the count
 * `nestsDeeperThan` (jsonDepth.ts) makes on text, made on the value without
 * recursion: it visits containers, not characters (a 24 KB answer is one
 * string).
 */
const deeperThan = (value: unknown, limit: number): boolean => {
  const stack: Array<readonly [object, number]> = typeof value === "object" && value !== null ? [[value, 1]] : []
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [container, depth] = next
    if (depth > limit) return true
    for (const child of Array.isArray(container) ? container : Object.values(container)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1])
    }
  }
  return false
}

/** `value` as JSON text, when it is shallow enough to re-serialize. */
const serialized = (value: unknown): string | undefined =>
  deeperThan(value, normalizedDepth) ? undefined : JSON.stringify(value)

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * A buffered `/responses` body with its omitted keys filled — the same
 * string when nothing was missing, or when it is not a Response.
 *
 * @since 0.1.0
 * @category utils
 */
export const normalizeBody = (text: string, fallbacks: Fallbacks): string => {
  if (!parseable(text)) return text
  const body = parse(text)
  if (!isObj(body) || !isResponse(body) || !Array.isArray(body["output"])) return text
  return (fillResponse(body, fallbacks, () => undefined) ? serialized(body) : undefined) ?? text
}

const LIFECYCLE = new Set(["response.created", "response.in_progress", "response.queued"])
const hasContentIndex = /^response\.(content_part|output_text|refusal|reasoning_text)\./

/**
 * One stream's events, filled in order (see the module comment): `rewrite`
 * takes an event's `data:` payload and returns it filled, or `undefined`
 * when it is complete or not a JSON event.
 *
 * @since 0.1.0
 * @category models
 */
export class StreamEvents {
  private sequence = 0
  private items = 0
  private current = -1
  private readonly ids: Array<string | undefined> = []
  private readonly indexOf = new Map<string, number>()
  private readonly parts: Array<{ count: number; current: number }> = []
  private createdAt: number | undefined = undefined
  private model: string | undefined = undefined
  private readonly fallbacks: Fallbacks

  constructor(fallbacks: Fallbacks) {
    this.fallbacks = {
      createdAt: () => this.createdAt ?? fallbacks.createdAt(),
      model: () => this.model ?? fallbacks.model()
    }
  }

  readonly rewrite = (data: string): string | undefined => {
    if (data.charCodeAt(0) !== 0x7b /* { */) return undefined
    const event = parse(data)
    if (!isObj(event) || typeof event["type"] !== "string") return undefined
    return this.fill(event, event["type"]) ? serialized(event) : undefined
  }

  private fill(event: Obj, type: string): boolean {
    let changed = false
    if (!has(event, "sequence_number")) {
      event["sequence_number"] = this.sequence
      changed = true
    }
    if (typeof event["sequence_number"] === "number") this.sequence = event["sequence_number"] + 1
    const response = event["response"]
    if (isObj(response)) return this.fillEmbedded(response, type) || changed
    if (!type.startsWith("response.") || has(event, "response")) return changed
    const item = isObj(event["item"]) ? event["item"] : undefined
    if (!has(event, "output_index")) {
      event["output_index"] = this.locate(type, event, item)
      changed = true
    }
    const at = event["output_index"]
    if (typeof at !== "number") return changed
    if (item !== undefined) {
      if (fillItem(item, () => this.ids[at] ?? synthesizedId(item, at), true)) changed = true
      this.register(item, at)
    } else if (!has(event, "item_id")) {
      event["item_id"] = this.ids[at] ?? `item_${at}`
      changed = true
    }
    if (hasContentIndex.test(type)) changed = this.fillContentIndex(event, type, at) || changed
    if (isObj(event["part"]) && fillPart(event["part"])) changed = true
    return changed
  }

  /** The output index of an event that names none: a new item, else the item it names, else the current one. */
  private locate(type: string, event: Obj, item: Obj | undefined): number {
    if (type === "response.output_item.added") return this.items
    const id = item !== undefined ? item["id"] ?? item["call_id"] : event["item_id"]
    const known = typeof id === "string" ? this.indexOf.get(id) : undefined
    return known ?? Math.max(this.current, 0)
  }

  private register(item: Obj, index: number): void {
    for (const key of ["id", "call_id"]) {
      const id = item[key]
      if (typeof id === "string") this.indexOf.set(id, index)
    }
    if (typeof item["id"] === "string") this.ids[index] = item["id"]
    this.current = index
    this.items = Math.max(this.items, index + 1)
  }

  private fillContentIndex(event: Obj, type: string, index: number): boolean {
    const parts = this.parts[index] ??= { count: 0, current: 0 }
    const given = event["content_index"]
    if (typeof given === "number") {
      if (type === "response.content_part.added") {
        parts.current = given
        parts.count = Math.max(parts.count, given + 1)
      }
      return false
    }
    if (type === "response.content_part.added") parts.current = parts.count++
    event["content_index"] = parts.current
    return true
  }

  private fillEmbedded(response: Obj, type: string): boolean {
    if (!isResponse(response)) return false
    let changed = false
    if (!has(response, "output") && LIFECYCLE.has(type)) {
      response["output"] = []
      changed = true
    }
    if (fillResponse(response, this.fallbacks, (index) => this.ids[index])) changed = true
    if (typeof response["created_at"] === "number") this.createdAt = response["created_at"]
    if (typeof response["model"] === "string") this.model = response["model"]
    return changed
  }
}
