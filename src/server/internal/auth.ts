/**
 * The API key check: the presented key (`Authorization: Bearer <key>` or
 * `x-api-key: <key>`) and the configured one are both hashed with SHA-256
 * and compared with `crypto.timingSafeEqual`, so neither the comparison's
 * time nor its length leaks the key. The configured key stays `Redacted`;
 * only its digest is kept.
 */
import type { Headers } from "@effect/platform"
import { Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

/** The key a request presents, if any. */
export const presentedKey = (headers: Headers.Headers): string | undefined => {
  const authorization = headers["authorization"]
  if (authorization !== undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization.trim())
    if (match !== null) return match[1]!.trim()
  }
  const apiKey = headers["x-api-key"]
  return apiKey === undefined || apiKey.trim() === "" ? undefined : apiKey.trim()
}

/** A checker of presented keys against the configured one. */
export interface KeyCheck {
  /** Whether the presented key is the configured one. */
  readonly matches: (presented: string) => boolean
}

/** A checker for `key`. */
export const make = (key: Redacted.Redacted<string>): KeyCheck => {
  const expected = digest(Redacted.value(key))
  return { matches: (presented) => timingSafeEqual(digest(presented), expected) }
}

const publicPath = /^\/(?:viewer(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*\/?)?$/

/**
 * Whether a path (as sent, before the query) is served without a key: the
 * viewer's page and its static assets carry no data (the page asks for the
 * key and sends it on its fetches). Only plain segments count — nothing
 * percent-encoded, no `..` — so no spelling of a data route passes as an
 * asset.
 */
export const isPublicPath = (rawPath: string): boolean => publicPath.test(rawPath) && !rawPath.includes("..")
