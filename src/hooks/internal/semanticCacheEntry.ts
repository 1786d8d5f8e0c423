/**
 * A semantic cache entry as the vector store holds it: its id, its payload
 * (the response, the gate's `cacheVary` at write time and the request's
 * salient tokens) and the effects
 * the hooks report about entries.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import type { Json, JsonObject } from "../../domain/Json.js"
import * as HookEffects from "../../runtime/HookEffects.js"
import { type SalientTokens, salientTokens } from "./salientTokens.js"

/** Effect ids of the lookup and the write. */
export const lookupEffectId = "semantic_cache_lookup"
export const writeEffectId = "semantic_cache_write"

/**
 * An entry's id: the same request text under the same scope replaces its
 * entry (a fresh answer after a rejected or expired one) instead of adding one.
 */
export const entryIdFor = (partition: string, keys: Readonly<Record<string, string>>, request: string): string =>
  `sc_${
    createHash("sha256").update(JSON.stringify([partition, Object.entries(keys).sort(), request])).digest("hex")
      .slice(0, 40)
  }`

/** What an entry's payload holds. */
export interface Entry {
  readonly response: string
  readonly cacheVary: Readonly<Record<string, string>>
  /** The written request's salient tokens (the guard compares them). */
  readonly salient: SalientTokens
}

/** Without `salient`, the tokens are extracted from the item's `text` when read. */
export const encodeEntry = (entry: Omit<Entry, "salient"> & { readonly salient?: SalientTokens }): JsonObject => ({
  response: entry.response,
  cache_vary: { ...entry.cacheVary },
  ...(entry.salient === undefined ? {} : { salient_tokens: [...entry.salient] })
})

const isStringRecord = (u: unknown): u is Readonly<Record<string, string>> =>
  typeof u === "object" && u !== null && !Array.isArray(u) && Object.values(u).every((v) => typeof v === "string")

const isStringArray = (u: unknown): u is ReadonlyArray<string> =>
  Array.isArray(u) && u.every((v) => typeof v === "string")

/**
 * The entry of a payload, or undefined when it is not one (written by
 * something else). An entry written before the guard existed has no tokens:
 * they are extracted from its stored request `text`.
 */
export const decodeEntry = (payload: JsonObject, text: string): Entry | undefined => {
  const response = payload["response"]
  const cacheVary = payload["cache_vary"]
  const stored = payload["salient_tokens"]
  if (typeof response !== "string" || !isStringRecord(cacheVary)) return undefined
  return { response, cacheVary, salient: isStringArray(stored) ? stored : salientTokens(text) }
}

/** UTF-8 length of a text. */
export const utf8Bytes = (text: string): number => Buffer.byteLength(text, "utf8")

/** Reports an effect of the current hook run; a refused report (outside a pipeline) changes nothing. */
export const report = (
  effectId: string,
  status: "succeeded" | "failed",
  data: { readonly [key: string]: Json },
  started: number,
  now: number,
  error?: string
) =>
  Effect.ignore(HookEffects.report({
    effectId,
    name: effectId === lookupEffectId ? "Semantic cache lookup" : "Semantic cache write",
    status,
    data,
    startedAt: started,
    duration: Math.max(0, now - started),
    ...(error === undefined ? {} : { error })
  }))
