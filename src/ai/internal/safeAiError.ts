/**
 * An `@effect/ai` `AiError` made safe to keep: what a provider error may
 * carry past the provider boundary (issue 17, "leaked keys").
 *
 * `@effect/ai` builds its HTTP errors from the platform's: `request.headers`
 * is the request's `Headers` object (with `Authorization: Bearer <key>` or
 * `x-api-key`), redacted only while a logger formats it, and an
 * `HttpRequestError` keeps the platform error, request and all, as `cause`.
 * `JSON.stringify` and `util.inspect` print them in full. The safe error is
 * the same `AiError` class (so `catchTag`, `isTransient` and `retry-after`
 * work unchanged) rebuilt from plain data:
 *
 * - the request: method, URL (credentials and secret-looking query
 *   parameters removed), query parameters — never its headers;
 * - the response: status and the headers a caller acts on (`retry-after`,
 *   rate limits, content type, request id), a body excerpt;
 * - no `cause`: what it said is kept as a bounded description (a parse
 *   failure's first issues, a transport failure's message chain), so
 *   nothing foreign — a request object, a 50 MB parse input, a value nested
 *   5,000 deep — rides along;
 * - every text scrubbed of the provider's key (`secrets.ts`).
 *
 * Translating twice is free: an error already made safe is returned as is.
 */
import { AiError } from "@effect/ai"
import { Option, ParseResult } from "effect"
import { none, redactedText, scrub, type Secrets } from "./secrets.js"

/**
 * How much of a response body an error keeps.
 *
 * @since 0.1.0
 * @category constants
 */
export const bodyExcerptChars = 2_000
/**
 * How much of a description (a transport failure, a parse failure) an error keeps.
 *
 * @since 0.1.0
 * @category constants
 */
export const descriptionChars = 1_000

const safe = new WeakSet<object>()

/**
 * Whether `error` was made safe here.
 *
 * @since 0.1.0
 * @category guards
 */
export const isSafe = (error: object): boolean => safe.has(error)

/**
 * `text`, cut to `max` characters (never inside a surrogate pair), saying how much was cut.
 *
 * @since 0.1.0
 * @category utils
 */
export const excerpt = (text: string, max: number): string => {
  if (text.length <= max) return text
  let end = max
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return `${text.slice(0, end)}… (${text.length - end} more characters)`
}

const secretParam = /key|token|secret|password|passwd|signature|sig$|auth|credential|session/i

const safeUrl = (url: string, secrets: Secrets): string => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return scrub(url, secrets)
  }
  parsed.username = ""
  parsed.password = ""
  for (const name of [...parsed.searchParams.keys()]) {
    if (secretParam.test(name)) parsed.searchParams.set(name, redactedText)
  }
  return scrub(parsed.toString(), secrets)
}

type RequestDetails = typeof AiError.HttpRequestDetails.Type

const safeRequest = (request: RequestDetails, secrets: Secrets): RequestDetails => ({
  method: request.method,
  url: safeUrl(request.url, secrets),
  urlParams: request.urlParams.map(
    ([name, value]) => [name, secretParam.test(name) ? redactedText : scrub(value, secrets)] as const
  ),
  hash: Option.map(request.hash, (hash) => scrub(hash, secrets)),
  headers: {}
})

/** Response headers a caller acts on; every other header is dropped. */
const keptHeader = /^(?:retry-after|retry-after-ms|content-type|x-request-id|request-id|[a-z-]*ratelimit[a-z-]*)$/

const safeResponseHeaders = (headers: Readonly<Record<string, string>>, secrets: Secrets): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const name in headers) {
    const lower = name.toLowerCase()
    const value = headers[name]
    if (keptHeader.test(lower) && typeof value === "string") out[lower] = scrub(excerpt(value, 200), secrets)
  }
  return out
}

/** A parse failure's first issues, each `path: message`, without formatting the whole input. */
const parseSummary = (error: ParseResult.ParseError): string => {
  try {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
    const shown = issues.slice(0, 3).map((issue) =>
      `${issue.path.map(String).join(".") || "(root)"}: ${excerpt(issue.message, 300)}`
    )
    return `${shown.join("; ")}${issues.length > 3 ? `; and ${issues.length - 3} more issue(s)` : ""}`
  } catch {
    // Formatting an issue formats its input: one nested too deeply overflows the stack.
    return "the response does not match the expected schema (its input could not be printed)"
  }
}

const messageOf = (u: unknown): string | undefined => {
  if (ParseResult.isParseError(u)) return parseSummary(u)
  if (u instanceof Error) {
    const code = "code" in u && typeof u.code === "string" ? ` (${u.code})` : ""
    return `${u.message}${code}`
  }
  return typeof u === "string" ? u : undefined
}

/** What a foreign cause said: the messages of its cause chain (three at most), never its fields. */
const describeCause = (cause: unknown): string | undefined => {
  const parts: Array<string> = []
  let current: unknown = cause
  for (let depth = 0; depth < 3 && current !== undefined && current !== null; depth++) {
    const message = messageOf(current)
    if (message !== undefined && message !== "" && !parts.includes(message)) parts.push(message)
    current = typeof current === "object" && "cause" in current ? current.cause : undefined
  }
  return parts.length === 0 ? undefined : parts.join(": ")
}

const text = (value: string | undefined, max: number, secrets: Secrets): string | undefined =>
  value === undefined ? undefined : scrub(excerpt(value, max), secrets)

const description = (own: string | undefined, cause: unknown, secrets: Secrets): string | undefined =>
  text(own ?? describeCause(cause), descriptionChars, secrets)

const marked = <E extends object>(error: E): E => {
  safe.add(error)
  return error
}

const build = (error: AiError.AiError, secrets: Secrets): AiError.AiError => {
  const options = { disableValidation: true }
  switch (error._tag) {
    case "HttpRequestError":
      return new AiError.HttpRequestError({
        module: error.module,
        method: error.method,
        reason: error.reason,
        request: safeRequest(error.request, secrets),
        description: description(error.description, error.cause, secrets)
      }, options)
    case "HttpResponseError":
      return new AiError.HttpResponseError({
        module: error.module,
        method: error.method,
        reason: error.reason,
        request: safeRequest(error.request, secrets),
        response: { status: error.response.status, headers: safeResponseHeaders(error.response.headers, secrets) },
        body: text(error.body, bodyExcerptChars, secrets),
        description: text(error.description, descriptionChars, secrets)
      }, options)
    case "MalformedInput":
      return new AiError.MalformedInput({
        module: error.module,
        method: error.method,
        description: description(error.description, error.cause, secrets)
      }, options)
    case "MalformedOutput":
      return new AiError.MalformedOutput({
        module: error.module,
        method: error.method,
        description: description(error.description, error.cause, secrets)
      }, options)
    case "UnknownError":
      return new AiError.UnknownError({
        module: error.module,
        method: error.method,
        description: description(error.description, error.cause, secrets)
      }, options)
  }
}

/**
 * What an `AiError` says, in one line (`MalformedOutput` and
 * `MalformedInput` have no message of their own: theirs prints their
 * fields).
 *
 * @since 0.1.0
 * @category utils
 */
export const aiErrorText = (error: AiError.AiError): string =>
  error._tag === "MalformedOutput" || error._tag === "MalformedInput"
    ? `${error._tag} (${error.module}.${error.method}): ${error.description ?? "no description"}`
    : error.message

/**
 * `error` rebuilt as described in the module comment, `secrets` scrubbed
 * from its text.
 *
 * @since 0.1.0
 * @category utils
 */
export const safeAiError = (error: AiError.AiError, secrets: Secrets = none): AiError.AiError =>
  safe.has(error) ? error : marked(build(error, secrets))
