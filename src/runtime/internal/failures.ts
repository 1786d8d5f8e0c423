/**
 * What a failed hook run records: the exact text of its failure (bounded,
 * credential-redacting, safe on hostile values), a panic's text, and the
 * decision its failure policy makes.
 */
import { Cause, Option } from "effect"
import type { DecisionPolicy, HookDecision } from "../../domain/ExecutionRecord.js"

/** How much of a failure's text a record keeps. */
const failureTextChars = 4_000

/** Members whose values are credentials: never written into a record (a header object, a client's options). */
const credentialKey = /authorization|api[-_]?key|token|secret|password|passwd|cookie|credential/i

/** A failure value as JSON text: credentials left out, BigInts as digits, cut at the record's bound. */
const jsonText = (error: object): string =>
  JSON.stringify(
    error,
    (key, value: unknown) =>
      credentialKey.test(key) ? "<redacted>" : typeof value === "bigint" ? value.toString() : value
  )

/**
 * The exact text of a failure value (its message, or its JSON text), cut at
 * 4,000 characters. A hostile value — a getter or Proxy that throws, an
 * object without a prototype, a cycle — gets a description, never a crash;
 * members named like credentials (`authorization`, `apiKey`, `token`…) are
 * left out of JSON text.
 */
export const failureText = (error: unknown): string => {
  let text: string
  try {
    text = failureTextOf(error)
  } catch {
    text = `a failure value that cannot be read (${typeof error})`
  }
  return text.length <= failureTextChars
    ? text
    : `${text.slice(0, failureTextChars)}… (${text.length - failureTextChars} more characters)`
}

const failureTextOf = (error: unknown): string => {
  if (typeof error === "string") return error
  if (typeof error === "object" && error !== null) {
    const message = (error as { readonly message?: unknown }).message
    const tag = (error as { readonly _tag?: unknown })._tag
    if (typeof message === "string" && message.length > 0) {
      return typeof tag === "string" && !message.startsWith(tag) ? `${tag}: ${message}` : message
    }
    if (typeof tag === "string") return tag
    try {
      return jsonText(error) ?? Object.prototype.toString.call(error)
    } catch {
      return Object.prototype.toString.call(error)
    }
  }
  return String(error)
}

/** The text of a panic's cause. */
export const panicText = (cause: Cause.Cause<unknown>): string => {
  const defect = Cause.dieOption(cause)
  return Option.isSome(defect) ? `panic: ${failureText(defect.value)}` : `panic: ${Cause.pretty(cause)}`
}

/** The decision recorded when a hook fails (or overruns) under `policy`. */
export const failureDecision = (policy: DecisionPolicy, reason: "hook_error" | "timed_out"): HookDecision =>
  policy === "fail_open"
    ? { policy, action: "continue", reason }
    : { policy, action: "terminate", reason }
