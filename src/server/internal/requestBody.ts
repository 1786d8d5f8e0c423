/**
 * Reading a request body: bounded before it is read (a `content-length`
 * over the limit is refused unread, and reading stops at the limit), parsed
 * as JSON, then decoded — a pipeline request by the library's own decoder
 * (`PipelineRequest.decode`: unknown fields, size and depth limits), any
 * other body by its Schema. Every refusal is an `ApiError` with the stable
 * body: 413 `too_large`, 400 `malformed` (with the field's path as
 * `param`), 400 `too_deep`.
 */
import { HttpIncomingMessage, type HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option, ParseResult, Schema } from "effect"
import { Readable } from "node:stream"
import { maxDepth } from "../../domain/Json.js"
import * as PipelineRequest from "../../domain/PipelineRequest.js"
import * as ApiError from "../ApiError.js"

const tooLarge = (maxBytes: number): ApiError.PayloadTooLarge =>
  new ApiError.PayloadTooLarge({
    error: {
      type: "invalid_request_error",
      code: "too_large",
      message: `the request body is larger than ${maxBytes} bytes`
    }
  })

const malformed = (message: string, param?: string): ApiError.BadRequest =>
  new ApiError.BadRequest({
    error: param === undefined || param === ""
      ? { type: "invalid_request_error", code: "malformed", message }
      : { type: "invalid_request_error", code: "malformed", message, param }
  })

/** The declared length of a body, when the request declares one. */
export const declaredLength = (request: HttpServerRequest.HttpServerRequest): number | undefined => {
  const header = request.headers["content-length"]
  if (header === undefined || !/^\d+$/.test(header)) return undefined
  return Number(header)
}

/** Refuses a body whose declared length is over `maxBytes`, without reading it. */
export const checkDeclaredLength = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number
): Effect.Effect<void, ApiError.PayloadTooLarge> => {
  const length = declaredLength(request)
  return length !== undefined && length > maxBytes ? Effect.fail(tooLarge(maxBytes)) : Effect.void
}

/**
 * The body's text, read up to `maxBytes`. Past the limit the rest is
 * discarded unread into memory — the request is not destroyed, so the
 * client still receives the 413 (sent with `connection: close`).
 */
const readText = (source: Readable, maxBytes: number) =>
  Effect.async<string, ApiError.BadRequest | ApiError.PayloadTooLarge>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBytes) return void chunks.push(chunk)
      cleanup()
      // Keep reading (and dropping) what is still on its way.
      source.on("error", () => {})
      source.resume()
      resume(Effect.fail(tooLarge(maxBytes)))
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    }
    const onError = () => {
      cleanup()
      resume(Effect.fail(malformed("the request body could not be read")))
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
    return Effect.sync(cleanup)
  })

/**
 * The body parsed as JSON. A declared length over `maxBytes` is refused
 * before anything is read; a body without one is read up to the limit.
 */
export const readJson = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number
): Effect.Effect<unknown, ApiError.BadRequest | ApiError.PayloadTooLarge> =>
  Effect.gen(function*() {
    yield* checkDeclaredLength(request, maxBytes)
    const source: unknown = NodeHttpServerRequest.toIncomingMessage(request)
    const text = yield* source instanceof Readable
      ? readText(source, maxBytes)
      // Not served by Node's HTTP server (a web handler): the platform's reader, then the bound.
      : request.text.pipe(
        HttpIncomingMessage.withMaxBodySize(Option.some(maxBytes)),
        Effect.mapError((error) =>
          String(error.cause).includes("maxBytes exceeded")
            ? tooLarge(maxBytes)
            : malformed("the request body could not be read")
        ),
        Effect.filterOrFail((read) => Buffer.byteLength(read, "utf8") <= maxBytes, () => tooLarge(maxBytes))
      )
    if (text.trim() === "") return yield* malformed("the request body is empty; expected a JSON object")
    try {
      return JSON.parse(text) as unknown
    } catch (thrown) {
      const detail = thrown instanceof Error ? thrown.message : String(thrown)
      return yield* malformed(`the request body is not JSON: ${detail}`)
    }
  })

/**
 * A pipeline request from a parsed body, checked by the library's decoder
 * with `limits`, and given a fresh request id when it has none.
 */
export const pipelineRequest = (
  body: unknown,
  limits: PipelineRequest.Limits
): Effect.Effect<PipelineRequest.Input, ApiError.ApiError> =>
  PipelineRequest.decode(body, limits).pipe(
    Effect.mapError(ApiError.fromPipelineError),
    Effect.map((request) => ({
      request: request.request,
      metadata: request.metadata,
      requestId: request.requestId ?? crypto.randomUUID()
    }))
  )

/** Whether a parsed JSON value nests deeper than `limit` levels (counted without recursion). */
export const nestsDeeperThan = (value: unknown, limit: number): boolean => {
  const stack: Array<readonly [unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!
    if (typeof current !== "object" || current === null) continue
    if (depth > limit) return true
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1])
    }
  }
  return false
}

/**
 * A parsed body decoded by `schema`: nesting deeper than the library's
 * bound (`Json.maxDepth`, plus the envelope's own levels) is `too_deep`;
 * a Schema failure is `malformed` at the first failing field.
 */
export const decodeBody = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(schema, { errors: "first", onExcessProperty: "ignore" })
  return (body: unknown): Effect.Effect<A, ApiError.BadRequest> =>
    nestsDeeperThan(body, maxDepth + 4)
      ? Effect.fail(
        new ApiError.BadRequest({
          error: {
            type: "invalid_request_error",
            code: "too_deep",
            message: `the request body nests deeper than ${maxDepth + 4} levels`
          }
        })
      )
      : decode(body).pipe(
        Effect.catchAll((error) =>
          Effect.flatMap(ParseResult.ArrayFormatter.formatError(error), (issues) => {
            const first = issues[0]
            const path = first === undefined ? "" : first.path.map(String).join(".")
            return Effect.fail(malformed(first?.message ?? "the request body does not match its schema", path))
          })
        )
      )
}
