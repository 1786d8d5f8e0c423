/**
 * The real cause of a store failure, in words. The drivers' errors arrive
 * wrapped: `@effect/sql` reports "Failed to execute statement" and keeps
 * SQLite's or PostgreSQL's own error in `cause`; the Migrator wraps that
 * again; a Layer that fails to build hands over a whole `Cause`. A warning
 * that stops at the outermost wrapper hides what an operator has to fix
 * (`SQLITE_READONLY: attempt to write a readonly database`), so every store
 * error's `detail` is built here: each distinct message down the `cause`
 * chain, with the driver's error code when its message does not already say
 * it.
 *
 * Only `message`, `code` and `cause` (and an `AggregateError`'s `errors`) are
 * read: never the request, the parameters or the connection options a
 * driver error may also carry, which can hold data or credentials.
 */
import { Cause } from "effect"

/** How far down `cause` chains (and how many of an AggregateError's errors) are followed. */
const maxDepth = 6
/** Long enough for any driver message; short enough for a log line. */
const maxLength = 1_000

/** A property, or undefined when reading it throws (a hostile getter or Proxy). */
const field = (value: object, key: string): unknown => {
  try {
    return Reflect.get(value, key)
  } catch {
    return undefined
  }
}

const stringField = (value: object, key: string): string | undefined => {
  const text = field(value, key)
  return typeof text === "string" && text.trim() !== "" ? text.trim() : undefined
}

const safeString = (value: unknown): string => {
  try {
    return String(value)
  } catch {
    return "unprintable error"
  }
}

/** The messages of `value` and what it wraps, outermost first. */
const messagesOf = (value: unknown, seen: Set<unknown>, depth: number, into: Array<string>): void => {
  if (depth > maxDepth || value === undefined || value === null || seen.has(value)) return
  seen.add(value)
  if (Cause.isCause(value)) {
    // A failed Layer or Effect: its first failure, else its first defect.
    messagesOf(Cause.squash(value), seen, depth + 1, into)
    return
  }
  if (typeof value !== "object") {
    into.push(safeString(value))
    return
  }
  let message = stringField(value, "message")
  const code = stringField(value, "code")
  if (code !== undefined && message !== undefined && !message.includes(code)) message = `${code}: ${message}`
  else if (message === undefined) message = code
  if (message !== undefined && !into.some((m) => m.includes(message))) into.push(message)
  const errors = field(value, "errors")
  if (Array.isArray(errors)) {
    for (const error of errors.slice(0, maxDepth)) messagesOf(error, seen, depth + 1, into)
  }
  messagesOf(field(value, "cause"), seen, depth + 1, into)
}

/**
 * What went wrong, down to the driver: `error`'s message and the distinct
 * messages of its causes, joined with `": "` (for example `Failed to execute
 * statement: SQLITE_READONLY: attempt to write a readonly database`).
 * Accepts any thrown value or a `Cause`.
 */
export const errorDetail = (error: unknown): string => {
  const messages: Array<string> = []
  messagesOf(error, new Set(), 0, messages)
  const detail = messages.length === 0 ? safeString(error) : messages.join(": ")
  return detail.length > maxLength ? `${detail.slice(0, maxLength)}…` : detail
}
