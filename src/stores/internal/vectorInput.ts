/**
 * The vector store's edge, shared by every backend: each call's input is
 * checked here before a backend sees it (fail closed: a refused input is a
 * typed `invalid_input` error and nothing is written), embeddings become
 * 32-bit floats once — so every backend stores and scores the same numbers —
 * and the cosine and ordering rules the brute-force paths apply live here.
 */
import { Either } from "effect"
import { clone, findNotJson, isJsonObject, type JsonObject } from "../../domain/Json.js"
import {
  type Item,
  limits,
  type PutInput,
  type RecentQuery,
  type RemoveFilter,
  type SearchQuery,
  VectorStoreError
} from "../contract/VectorStore.js"

type Operation = VectorStoreError["operation"]

const refuse = (operation: Operation, detail: string) =>
  Either.left(new VectorStoreError({ operation, reason: "invalid_input", detail }))

const utf8 = new TextEncoder()

// In a `u` regex a surrogate pair is one code point: only lone surrogates match.
const loneSurrogate = /\p{Cs}/u

/** Why a string field is refused, or undefined. */
const badString = (value: unknown, name: string, maxLength: number, allowEmpty = false): string | undefined => {
  if (typeof value !== "string") return `${name} must be a string`
  if (!allowEmpty && value.length === 0) return `${name} must not be empty`
  if (value.length > maxLength) return `${name} is longer than ${maxLength} characters`
  if (value.includes("\u0000")) return `${name} contains a NUL character`
  if (loneSurrogate.test(value)) return `${name} is not well-formed Unicode (a lone surrogate)`
  return undefined
}

const keyName = /^[A-Za-z0-9_-]+$/

/** The keys in canonical order (by name), or why they are refused. */
const checkKeys = (keys: unknown): Either.Either<Readonly<Record<string, string>>, string> => {
  if (keys === undefined) return Either.right({})
  if (typeof keys !== "object" || keys === null || Array.isArray(keys)) return Either.left("keys must be an object")
  const entries = Object.entries(keys)
  if (entries.length > limits.maxKeys) return Either.left(`more than ${limits.maxKeys} keys`)
  const sorted: Record<string, string> = {}
  for (const [name, value] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (name.length > limits.maxKeyNameLength || !keyName.test(name)) {
      return Either.left(
        `key name ${JSON.stringify(name.slice(0, 80))}: use 1..${limits.maxKeyNameLength} letters, digits, "_" or "-"`
      )
    }
    const bad = badString(value, `key ${name}`, limits.maxKeyValueLength, true)
    if (bad !== undefined) return Either.left(bad)
    sorted[name] = value
  }
  return Either.right(sorted)
}

/** A vector as float32, or why it is refused. */
const checkVector = (vector: unknown, name: string): Either.Either<Float32Array, string> => {
  if (!Array.isArray(vector)) return Either.left(`${name} must be an array of numbers`)
  if (vector.length === 0 || vector.length > limits.maxDimensions) {
    return Either.left(`${name} has ${vector.length} dimensions; allowed: 1..${limits.maxDimensions}`)
  }
  const floats = new Float32Array(vector.length)
  for (let i = 0; i < vector.length; i++) {
    const x: unknown = vector[i]
    if (typeof x !== "number" || !Number.isFinite(x)) return Either.left(`${name}[${i}] is not a finite number`)
    floats[i] = x
    // A finite double past float32's range rounds to Infinity.
    if (!Number.isFinite(floats[i]!)) return Either.left(`${name}[${i}] is outside the float32 range`)
  }
  return Either.right(floats)
}

const isTime = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0

const isLimit = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= limits.maxLimit

/**
 * Below this L2 norm a vector has no direction: it is stored, never found,
 * and as a query finds nothing. Not only all-zero vectors: `sqlite-vec`
 * computes in float32, where the squares of components below ~1e-19
 * underflow to zero, so tinier vectors would score differently per backend.
 */
export const minNorm = 1e-12

/** The L2 norm of a float32 vector, in double precision; 0 below {@link minNorm}. */
export const normOf = (vector: Float32Array): number => {
  let sum = 0
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!
  const norm = Math.sqrt(sum)
  return norm < minNorm ? 0 : norm
}

/** Cosine similarity of two vectors of equal length and non-zero norms. */
export const cosineOf = (a: Float32Array, normA: number, b: Float32Array, normB: number): number => {
  let dot = 0
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!
  return dot / (normA * normB)
}

/** A put, checked: the item as it will be stored and its encoded parts. */
export interface CheckedPut {
  readonly item: Item
  readonly vector: Float32Array | undefined
  readonly norm: number
  readonly keysJson: string
  readonly payloadJson: string
  /** The UTF-8 bytes of text, payload, keys and embedding (what a memory bound counts). */
  readonly bytes: number
}

/** Checks a put at `now` (the default `createdAt`). */
export const checkPut = (input: PutInput, now: number): Either.Either<CheckedPut, VectorStoreError> => {
  const bad = badString(input.collection, "collection", limits.maxIdLength) ??
    badString(input.id, "id", limits.maxIdLength) ??
    badString(input.partition, "partition", limits.maxIdLength) ??
    badString(input.text, "text", Number.MAX_SAFE_INTEGER, true)
  if (bad !== undefined) return refuse("put", bad)
  const textBytes = utf8.encode(input.text).length
  if (textBytes > limits.maxTextBytes) {
    return refuse("put", `text is ${textBytes} bytes; at most ${limits.maxTextBytes}`)
  }
  if (!isJsonObject(input.payload)) {
    const where = findNotJson(input.payload)
    return refuse("put", `payload must be a JSON object${where === undefined ? "" : `: ${where.reason}`}`)
  }
  const payloadJson = JSON.stringify(input.payload)
  const payloadBytes = utf8.encode(payloadJson).length
  if (payloadBytes > limits.maxPayloadBytes) {
    return refuse("put", `payload is ${payloadBytes} bytes of JSON; at most ${limits.maxPayloadBytes}`)
  }
  const keys = checkKeys(input.keys)
  if (Either.isLeft(keys)) return refuse("put", keys.left)
  const createdAt = input.createdAt ?? now
  if (!isTime(createdAt)) return refuse("put", "createdAt must be a non-negative integer (epoch milliseconds)")
  if (input.expiresAt !== undefined && !isTime(input.expiresAt)) {
    return refuse("put", "expiresAt must be a non-negative integer (epoch milliseconds)")
  }
  let vector: Float32Array | undefined
  if (input.embedding !== undefined) {
    const checked = checkVector(input.embedding, "embedding")
    if (Either.isLeft(checked)) return refuse("put", checked.left)
    vector = checked.right
  }
  const keysJson = JSON.stringify(keys.right)
  const item: Item = {
    collection: input.collection,
    id: input.id,
    partition: input.partition,
    keys: keys.right,
    text: input.text,
    payload: clone(input.payload),
    ...(vector === undefined ? {} : { embedding: Array.from(vector) }),
    createdAt,
    ...(input.expiresAt === undefined ? {} : { expiresAt: input.expiresAt })
  }
  return Either.right({
    item,
    vector,
    norm: vector === undefined ? 0 : normOf(vector),
    keysJson,
    payloadJson,
    bytes: textBytes + payloadBytes + keysJson.length + (vector?.length ?? 0) * 4
  })
}

/** Checks a collection + id lookup. */
export const checkGet = (
  key: { readonly collection: string; readonly id: string }
): Either.Either<void, VectorStoreError> => {
  const bad = badString(key.collection, "collection", limits.maxIdLength) ??
    badString(key.id, "id", limits.maxIdLength)
  return bad === undefined ? Either.void : refuse("get", bad)
}

/** A search, checked: the query vector as float32 and its norm, the keys canonical. */
export interface CheckedSearch {
  readonly query: SearchQuery
  readonly vector: Float32Array
  readonly norm: number
  readonly keys: Readonly<Record<string, string>>
}

/** Checks a search. */
export const checkSearch = (query: SearchQuery): Either.Either<CheckedSearch, VectorStoreError> => {
  const bad = badString(query.collection, "collection", limits.maxIdLength) ??
    badString(query.partition, "partition", limits.maxIdLength)
  if (bad !== undefined) return refuse("search", bad)
  if (!isLimit(query.limit)) return refuse("search", `limit must be an integer from 1 to ${limits.maxLimit}`)
  if (
    query.minScore !== undefined &&
    (typeof query.minScore !== "number" || !Number.isFinite(query.minScore) || Math.abs(query.minScore) > 1)
  ) return refuse("search", "minScore must be a number from -1 to 1")
  const keys = checkKeys(query.keys)
  if (Either.isLeft(keys)) return refuse("search", keys.left)
  const vector = checkVector(query.vector, "vector")
  if (Either.isLeft(vector)) return refuse("search", vector.left)
  return Either.right({ query, vector: vector.right, norm: normOf(vector.right), keys: keys.right })
}

/** Checks a recent query; returns its canonical keys. */
export const checkRecent = (query: RecentQuery): Either.Either<Readonly<Record<string, string>>, VectorStoreError> => {
  const bad = badString(query.collection, "collection", limits.maxIdLength) ??
    badString(query.partition, "partition", limits.maxIdLength)
  if (bad !== undefined) return refuse("recent", bad)
  if (!isLimit(query.limit)) return refuse("recent", `limit must be an integer from 1 to ${limits.maxLimit}`)
  if (query.since !== undefined && !isTime(query.since)) {
    return refuse("recent", "since must be a non-negative integer (epoch milliseconds)")
  }
  const keys = checkKeys(query.keys)
  return Either.isLeft(keys) ? refuse("recent", keys.left) : Either.right(keys.right)
}

/** Checks a remove filter; returns its canonical keys. */
export const checkRemove = (
  filter: RemoveFilter
): Either.Either<Readonly<Record<string, string>>, VectorStoreError> => {
  const bad = badString(filter.collection, "collection", limits.maxIdLength) ??
    (filter.partition === undefined ? undefined : badString(filter.partition, "partition", limits.maxIdLength))
  if (bad !== undefined) return refuse("remove", bad)
  if (filter.ids !== undefined) {
    if (!Array.isArray(filter.ids) || filter.ids.length > limits.maxLimit) {
      return refuse("remove", `ids must be an array of at most ${limits.maxLimit} ids`)
    }
    for (const id of filter.ids) {
      const badId = badString(id, "id", limits.maxIdLength)
      if (badId !== undefined) return refuse("remove", badId)
    }
  }
  const keys = checkKeys(filter.keys)
  return Either.isLeft(keys) ? refuse("remove", keys.left) : Either.right(keys.right)
}

/** Whether an item's keys include every given key=value. */
export const hasKeys = (item: Readonly<Record<string, string>>, wanted: Readonly<Record<string, string>>): boolean => {
  for (const name in wanted) {
    if (!Object.hasOwn(item, name) || item[name] !== wanted[name]) return false
  }
  return true
}

/** Whether an item is live at `now`. */
export const isLive = (item: { readonly expiresAt?: number | undefined }, now: number): boolean =>
  item.expiresAt === undefined || now < item.expiresAt

/** Search order: higher score, then newer, then by id. */
export const bySearchOrder = (
  a: { readonly score: number; readonly createdAt: number; readonly id: string },
  b: { readonly score: number; readonly createdAt: number; readonly id: string }
): number => b.score - a.score || b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** Recent order: newer, then by id. */
export const byRecentOrder = (a: Item, b: Item): number =>
  b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** A payload read back: a JSON object, or undefined when the stored text is not one. */
export const parsePayload = (text: string): JsonObject | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return isJsonObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * The best `k` of `hits` in search order, kept as they arrive (an insertion
 * into a sorted array of at most `k`): a brute-force scan of a large
 * partition never sorts all of it.
 */
export const topK = <A extends { readonly score: number; readonly createdAt: number; readonly id: string }>(
  k: number
) => {
  const best: Array<A> = []
  return {
    offer: (hit: A): void => {
      if (best.length === k && bySearchOrder(hit, best[k - 1]!) >= 0) return
      let low = 0
      let high = best.length
      while (low < high) {
        const mid = (low + high) >>> 1
        if (bySearchOrder(best[mid]!, hit) <= 0) low = mid + 1
        else high = mid
      }
      best.splice(low, 0, hit)
      if (best.length > k) best.pop()
    },
    result: (): ReadonlyArray<A> => best
  }
}
