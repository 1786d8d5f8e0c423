/**
 * What every provider's HTTP requests carry and how they are traced
 * (issue 19), as one `HttpClient` transform, {@link httpConventions}:
 *
 * - **User-Agent**: `effect-agent-pipeline/<version>` ({@link userAgent}),
 *   appended to the one a user's `transformClient` set (`my-app/2.1
 *   effect-agent-pipeline/0.1.0`), never replacing it.
 * - **Trace context only when it goes somewhere**: with a tracer that
 *   collects spans (`collects` in runtime/internal/spans.ts), the request's
 *   `http.client` span is made and its context propagated (`traceparent`,
 *   `b3`, by `@effect/platform`); without one — Effect's built-in tracer,
 *   which exports nowhere, or tracing disabled — no span is made and no
 *   trace header is sent (the platform would otherwise propagate the ids of
 *   spans nobody records).
 * - **A failed attempt is an error**: an `http.client` span whose response
 *   has a status ≥ 400 ends with error status and `error.type` = the status
 *   code (`429`), as OpenTelemetry's HTTP client conventions say; one that
 *   failed before a response (refused, reset) ends with error status and
 *   `error.type` = the Node error code (`ECONNREFUSED`), else the
 *   platform's reason (`Transport`). The platform ends such spans OK.
 *   Its `server.address` is the host (`api.openai.com`), as the conventions
 *   say, not the URL's origin the platform puts there.
 * - **No credential on a span**: the platform writes headers on the
 *   `http.client` span; besides the ones it masks, `api-key` (Azure),
 *   `x-goog-api-key`, `proxy-authorization` and any `…-token` / `…-secret`
 *   / `…-api-key` header are masked too.
 *
 * Apply it around the user's `transformClient` (so it sees the User-Agent
 * that transform set) and inside anything that reads the response
 * (`boundErrorBodies`, a status filter): `boundErrorBodies(httpConventions(
 * transform(client)))`. The version is read from the package's own
 * `package.json`, next to `dist/` in the installed package as next to
 * `src/` in the repository.
 */
import { Headers, HttpClient, HttpClientRequest } from "@effect/platform"
import { Cause, Effect, Exit, Option, type Tracer } from "effect"
import { constTrue } from "effect/Function"
import { createRequire } from "node:module"
import { adaptingSpans, collects, delegating } from "../../runtime/internal/spans.js"

/** The package's version, from its `package.json` (three folders up from `src/ai/internal/` and `dist/ai/internal/`). */
const packageVersion = (): string | undefined => {
  try {
    const manifest: unknown = createRequire(import.meta.url)("../../../package.json")
    return typeof manifest === "object" && manifest !== null && "version" in manifest &&
        typeof manifest.version === "string"
      ? manifest.version
      : undefined
  } catch {
    return undefined
  }
}

/**
 * The User-Agent product token every provider request carries:
 * `effect-agent-pipeline/<version>` (the name alone if the package's
 * `package.json` cannot be read, e.g. in a bundle).
 *
 * @since 0.1.0
 * @category constants
 */
export const userAgent: string =
  ((version) => version === undefined ? "effect-agent-pipeline" : `effect-agent-pipeline/${version}`)(packageVersion())

/**
 * `request` with {@link userAgent} appended to its User-Agent (set when it
 * has none; left as is when it already names it).
 *
 * @since 0.1.0
 * @category utils
 */
export const withUserAgent = (request: HttpClientRequest.HttpClientRequest): HttpClientRequest.HttpClientRequest => {
  const current = request.headers["user-agent"]?.trim() ?? ""
  if (current.split(/\s+/).includes(userAgent)) return request
  return HttpClientRequest.setHeader(request, "user-agent", current === "" ? userAgent : `${current} ${userAgent}`)
}

const statusCodeAttribute = "http.response.status_code"

/** A host from what the platform sets as `server.address` (the URL's origin). */
const hostOf = (value: unknown): unknown => {
  if (typeof value !== "string" || !value.includes("://")) return value
  try {
    return new URL(value).hostname.replace(/^\[(.*)\]$/, "$1")
  } catch {
    return value
  }
}

/** The failure an error response's span ends with (the request itself succeeded: the caller gets the response). */
class ErrorStatus extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`)
    this.name = "HttpErrorStatus"
  }
}

/** A Node error code (`ECONNREFUSED`, `UND_ERR_SOCKET`) somewhere down a cause chain. */
const codeOf = (error: unknown, depth = 0): string | undefined => {
  if (typeof error !== "object" || error === null || depth > 4) return undefined
  if ("code" in error && typeof error.code === "string" && error.code !== "") return error.code
  return "cause" in error ? codeOf(error.cause, depth + 1) : undefined
}

/** `error.type` of an attempt that got no response. */
const transportErrorType = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return "_OTHER"
  const error: unknown = failure.value
  const code = codeOf(error)
  if (code !== undefined) return code
  if (typeof error === "object" && error !== null) {
    if ("reason" in error && typeof error.reason === "string") return error.reason
    if ("_tag" in error && typeof error._tag === "string") return error._tag
  }
  return "_OTHER"
}

/**
 * The platform's `http.client` span, ending with error status when its
 * response had a status ≥ 400 or it failed (see the module comment), else
 * as the platform ends it; its `server.address` the host.
 */
const failingOnErrorStatus = (span: Tracer.Span): Tracer.Span => {
  let code: number | undefined
  return delegating(span, {
    attribute: (key, value) => {
      if (key === statusCodeAttribute && typeof value === "number") code = value
      span.attribute(key, key === "server.address" ? hostOf(value) : value)
    },
    end: (endTime, exit) => {
      if (Exit.isSuccess(exit)) {
        if (code === undefined || code < 400) return span.end(endTime, exit)
        span.attribute("error.type", String(code))
        return span.end(endTime, Exit.fail(new ErrorStatus(code)))
      }
      if (!Cause.isInterruptedOnly(exit.cause)) span.attribute("error.type", transportErrorType(exit.cause))
      span.end(endTime, exit)
    }
  })
}

/**
 * Header names whose values never reach a span: the platform writes every
 * request and response header on the `http.client` span
 * (`http.request.header.*`) and masks only `authorization`, `cookie`,
 * `set-cookie` and `x-api-key`. Keys also travel as Azure's `api-key`,
 * Google's `x-goog-api-key`, a proxy's `proxy-authorization`, or a
 * `transformClient`'s own `x-…-token` / `…-secret`.
 */
const credentialHeaders: ReadonlyArray<string | RegExp> = [
  "api-key",
  "proxy-authorization",
  "x-goog-api-key",
  /(^|-)(api-?key|token|secret|password|credentials?)$/i
]

const withCredentialHeaders = (names: ReadonlyArray<string | RegExp>): ReadonlyArray<string | RegExp> => [
  ...names,
  ...credentialHeaders
]

/**
 * The provider's HTTP client with the conventions of the module comment:
 * a User-Agent naming this library, trace context only when a tracer
 * collects spans, error status on failed attempts. Apply it around the
 * user's `transformClient`: `boundErrorBodies(httpConventions(transform(client)))`.
 *
 * @since 0.1.0
 * @category utils
 */
export const httpConventions = (client: HttpClient.HttpClient): HttpClient.HttpClient => {
  // The platform makes the attempt's span (and propagates its context): the client span made under it.
  const attemptSpans = adaptingSpans((_name, kind, _parent, make) =>
    kind === "client" ? failingOnErrorStatus(make()) : make()
  )
  return client.pipe(
    HttpClient.mapRequest(withUserAgent),
    HttpClient.transformResponse((effect) =>
      Effect.withFiberRuntime((fiber) =>
        collects(fiber)
          ? Effect.locallyWith(attemptSpans(effect), Headers.currentRedactedNames, withCredentialHeaders)
          // Nobody records spans: none is made, so no trace context is sent.
          : Effect.locally(effect, HttpClient.currentTracerDisabledWhen, constTrue)
      )
    )
  )
}
