/**
 * The pieces of the provider boundary (issue 17), each on its own: the
 * safe `AiError` (what a provider error keeps), the key's forms scrubbed
 * from text, the nesting check that runs before recursive code, and the
 * UTF-8 measure and cut of a model's output — the last two checked against
 * Node's own encoder over arbitrary strings.
 */
import { AiError } from "@effect/ai"
import { HttpClientError, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { FastCheck, Option, ParseResult, Redacted, Schema } from "effect"
import { nestsDeeperThan } from "../../src/ai/internal/jsonDepth.js"
import { exceeds, utf8Length, utf8Prefix } from "../../src/ai/internal/outputBounds.js"
import { bodyExcerptChars, isSafe, safeAiError } from "../../src/ai/internal/safeAiError.js"
import { minSecretLength, scrub, secretsOf } from "../../src/ai/internal/secrets.js"

const KEY = "sk-boundary-0123456789abcdef"
const secrets = secretsOf([Redacted.make(KEY)])

const request = {
  method: "POST",
  url: `https://user:${KEY}@api.example.com/v1/responses?api-key=${KEY}&model=m`,
  urlParams: [["api-key", KEY], ["model", "m"]],
  hash: Option.none(),
  headers: { authorization: `Bearer ${KEY}`, "x-api-key": KEY, "content-type": "application/json" }
} as const

describe("provider boundary: the safe AiError", () => {
  it("leaked keys: an HttpResponseError keeps method, URL (no credentials), status, a scrubbed body excerpt and the retry headers — never the request's headers", () => {
    const error = safeAiError(
      new AiError.HttpResponseError({
        module: "OpenAiClient",
        method: "createResponse",
        reason: "StatusCode",
        request,
        response: {
          status: 429,
          headers: {
            "retry-after": "2",
            "x-ratelimit-remaining-requests": "0",
            "set-cookie": `session=${KEY}`,
            "x-debug": "1"
          }
        },
        body: `invalid key ${KEY} ${"x".repeat(10_000)}`
      }),
      secrets
    )
    if (error._tag !== "HttpResponseError") return expect.unreachable()
    expect(error.request.headers).toEqual({})
    expect(error.request.method).toBe("POST")
    expect(error.request.url).toBe("https://api.example.com/v1/responses?api-key=%3Credacted%3E&model=m")
    expect(error.request.urlParams).toEqual([["api-key", "<redacted>"], ["model", "m"]])
    expect(error.response).toEqual({
      status: 429,
      headers: { "retry-after": "2", "x-ratelimit-remaining-requests": "0" }
    })
    expect(error.body?.startsWith("invalid key <redacted> xxx")).toBe(true)
    expect(error.body?.length).toBeLessThan(bodyExcerptChars + 40)
    expect(JSON.stringify(error)).not.toContain(KEY)
    expect(error.message).toContain("429 POST https://api.example.com/v1/responses")
  })

  it("leaked keys: an HttpRequestError loses its foreign cause (the platform error and its request) but keeps what the cause said", () => {
    const platformRequest = HttpClientRequest.post("https://api.example.com/v1/responses").pipe(
      HttpClientRequest.bearerToken(KEY)
    )
    const transport = new HttpClientError.RequestError({
      request: platformRequest,
      reason: "Transport",
      cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" })
    })
    const raw = AiError.HttpRequestError.fromRequestError({
      module: "OpenAiClient",
      method: "createResponse",
      error: transport
    })
    expect(JSON.stringify(raw)).toContain(KEY)
    const error = safeAiError(raw, secrets)
    if (error._tag !== "HttpRequestError") return expect.unreachable()
    expect(error.cause).toBeUndefined()
    expect(error.request.headers).toEqual({})
    expect(error.description).toContain("ECONNREFUSED")
    expect(JSON.stringify(error)).not.toContain(KEY)
  })

  it("hostile values: a MalformedOutput whose parse input is nested 5,000 deep is described without printing it", () => {
    let deep: unknown = 1
    for (let i = 0; i < 5_000; i++) deep = [deep]
    const parseError = Schema.decodeUnknownEither(Schema.Struct({ id: Schema.String }))(deep)
    if (parseError._tag !== "Left") return expect.unreachable()
    const error = safeAiError(
      new AiError.MalformedOutput({ module: "OpenAiClient", method: "createResponse", cause: parseError.left })
    )
    if (error._tag !== "MalformedOutput") return expect.unreachable()
    expect(error.cause).toBeUndefined()
    expect(error.description).toMatch(/expected schema|Expected/)
    expect(() => JSON.stringify(error)).not.toThrow()
    expect(ParseResult.isParseError(error.cause)).toBe(false)
  })

  it("leaked keys: translating twice returns the same safe error; every AiError kind is translated", () => {
    const kinds: ReadonlyArray<AiError.AiError> = [
      new AiError.MalformedInput({ module: "m", method: "x", cause: new Error(`bad ${KEY}`) }),
      new AiError.UnknownError({ module: "m", method: "x", cause: { request: { headers: { authorization: KEY } } } }),
      new AiError.HttpResponseError({
        module: "m",
        method: "x",
        reason: "Decode",
        request,
        response: { status: 200, headers: {} }
      })
    ]
    for (const kind of kinds) {
      const safe = safeAiError(kind, secrets)
      expect(safe._tag).toBe(kind._tag)
      expect(isSafe(safe)).toBe(true)
      expect(safeAiError(safe, secrets)).toBe(safe)
      expect(JSON.stringify(safe)).not.toContain(KEY)
    }
  })

  it("leaked keys: a response error the platform built from a real response keeps no request header either", () => {
    const platformRequest = HttpClientRequest.post("https://api.example.com/v1/messages").pipe(
      HttpClientRequest.setHeader("x-api-key", KEY)
    )
    const response = HttpClientResponse.fromWeb(platformRequest, new Response("{}", { status: 401 }))
    const raw = new AiError.HttpResponseError({
      module: "AnthropicClient",
      method: "createMessage",
      reason: "StatusCode",
      request: { ...request, headers: { ...response.request.headers } },
      response: { status: 401, headers: {} }
    })
    expect(JSON.stringify(raw)).toContain(KEY)
    expect(JSON.stringify(safeAiError(raw))).not.toContain(KEY)
  })
})

describe("provider boundary: the key's forms", () => {
  it("leaked keys: the key, Bearer <key>, base64 and base64url of the key are scrubbed; a key too short to look for is left alone", () => {
    const text = `k=${KEY} h=Bearer ${KEY} b=${Buffer.from(KEY).toString("base64")} u=${
      Buffer.from(KEY).toString("base64url")
    }`
    const scrubbed = scrub(text, secrets)
    expect(scrubbed).not.toContain(KEY)
    expect(scrubbed).not.toContain(Buffer.from(KEY).toString("base64").replace(/=+$/, ""))
    expect(scrubbed).not.toContain(Buffer.from(KEY).toString("base64url"))
    expect(scrub("a key: k", secretsOf([Redacted.make("k")]))).toBe("a key: k")
    expect(secretsOf([Redacted.make("x".repeat(minSecretLength - 1))]).forms).toEqual([])
  })
})

describe("provider boundary: nesting is measured without recursion", () => {
  it("hostile values: brackets inside strings do not count; 100,000 levels are measured without overflowing", () => {
    expect(nestsDeeperThan("{\"a\":[1,{\"b\":2}]}", 3)).toBe(false)
    expect(nestsDeeperThan("{\"a\":[1,{\"b\":2}]}", 2)).toBe(true)
    expect(nestsDeeperThan(`{"a":"${"[".repeat(1_000)}"}`, 1)).toBe(false)
    expect(nestsDeeperThan(`{"a":"\\"${"[".repeat(10)}"}`, 1)).toBe(false)
    expect(nestsDeeperThan("[".repeat(100_000), 256)).toBe(true)
    expect(nestsDeeperThan("not json at all", 0)).toBe(false)
  })

  it("hostile values: the measure agrees with the depth of any JSON value", () => {
    const depthOf = (u: unknown): number =>
      typeof u === "object" && u !== null ? 1 + Math.max(0, ...Object.values(u).map(depthOf)) : 0
    FastCheck.assert(
      FastCheck.property(
        FastCheck.jsonValue({ maxDepth: 6 }),
        FastCheck.integer({ min: 0, max: 8 }),
        (value, limit) => {
          expect(nestsDeeperThan(JSON.stringify(value), limit)).toBe(depthOf(value) > limit)
        }
      )
    )
  })
})

describe("model output bounds: UTF-8 measure and cut", () => {
  const anyText = FastCheck.oneof(
    FastCheck.string({ unit: "grapheme", maxLength: 60 }),
    FastCheck.string({ unit: "binary", maxLength: 60 })
  )

  it("model output bounds: utf8Length and exceeds agree with Node's encoder on any string (lone surrogates included)", () => {
    FastCheck.assert(
      FastCheck.property(anyText, FastCheck.integer({ min: 0, max: 250 }), (text, max) => {
        expect(utf8Length(text)).toBe(Buffer.byteLength(text, "utf8"))
        expect(exceeds(text, max)).toBe(Buffer.byteLength(text, "utf8") > max)
      })
    )
  })

  it("model output bounds: utf8Prefix is the longest prefix within the limit that does not split a surrogate pair", () => {
    FastCheck.assert(
      FastCheck.property(anyText, FastCheck.integer({ min: 0, max: 250 }), (text, max) => {
        const prefix = utf8Prefix(text, max)
        expect(text.startsWith(prefix)).toBe(true)
        expect(Buffer.byteLength(prefix, "utf8")).toBeLessThanOrEqual(max)
        if (prefix.length < text.length) {
          const last = prefix.charCodeAt(prefix.length - 1)
          const next = text.charCodeAt(prefix.length)
          // Never half a pair…
          expect(last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff).toBe(false)
          // …and the next character (a whole pair when it is one) would not fit.
          const nextChar = String.fromCodePoint(text.codePointAt(prefix.length) ?? 0)
          const step = next >= 0xd800 && next <= 0xdbff && nextChar.length === 2 ? nextChar : text[prefix.length]!
          expect(Buffer.byteLength(prefix + step, "utf8")).toBeGreaterThan(max)
        }
      })
    )
  })
})
