/**
 * Redaction of secrets and personal data (seed 004, issue 23): a scanner
 * that finds API keys, tokens, private keys, emails, phone and card numbers
 * in text, and a stream guard that redacts streamed text without ever
 * letting a secret through, whatever the chunk boundaries.
 *
 * - {@link make} builds a {@link Redactor}: `scan` lists findings (kind and
 *   range, never the matched text), `redact` replaces each run of
 *   overlapping or adjacent findings with one marker, `[REDACTED:<kind>]`.
 *   Redaction is idempotent: redacting redacted text changes nothing (a
 *   finding may start where another ends, as it could after that one's
 *   marker). Known gap: a secret glued to a following one may fail its own
 *   end boundary and be found only on a second pass.
 * - {@link streamGuard} is a pure state machine over chunks, and
 *   {@link redactStream} the same as a `Stream` combinator. The guard holds
 *   back at most {@link Redactor.window} characters — the longest reach of
 *   an enabled pattern — and releases everything else at once. Its
 *   guarantee: **the concatenation of its output is exactly
 *   `redact(concatenation of its input).text`**, for every way of cutting
 *   the input into chunks, so a secret split across chunks is redacted as
 *   if it had arrived whole, and nothing it would redact is ever emitted.
 *   A surrogate pair is never split in the output.
 *
 * Every pattern has a maximum match length (a user pattern must declare one
 * and use only bounded quantifiers, or `make` fails with {@link RedactionError}):
 * that bound lets the guard decide a position without waiting for the end of
 * the stream. Patterns may look at most 16 characters around their match.
 *
 * | kind | what | longest match |
 * | --- | --- | --- |
 * | `private_key` | a PEM `-----BEGIN … PRIVATE KEY-----` block (up to 4,096 characters of body) | 4,228 |
 * | `anthropic_key` | `sk-ant-…` | 207 |
 * | `openai_key` | `sk-…`, `sk-proj-…` (with a digit and an upper-case letter) | 211 |
 * | `aws_access_key_id` | `AKIA…`, `ASIA…` + 16 | 20 |
 * | `aws_secret_key` | 40 characters after `aws_secret_access_key =` (quotes may be escaped) | 76 |
 * | `github_token` | `ghp_`, `gho_`, `ghs_`, `ghu_`, `ghr_`, `github_pat_` | 255 |
 * | `slack_token` | `xoxb-`, `xoxp-`, … | 255 |
 * | `google_api_key` | `AIza` + 35 | 39 |
 * | `stripe_key` | `sk_live_`, `rk_live_`, `sk_test_`, `rk_test_` | 255 |
 * | `bearer_token` | the token after `Bearer ` | 2,059 |
 * | `jwt` | three base64url parts, `eyJ….eyJ….…` | 3,504 |
 * | `email` | `local@domain.tld` | 345 |
 * | `phone` | `+` international (8–15 digits), North American with separators, national with a trunk 0 and separators | 71 |
 * | `card_number` | 13–19 digits, spaces or dashes allowed, Luhn-valid | 37 |
 *
 * The window is the longest enabled pattern + 16 (4,244 with every kind on),
 * held only behind a trigger (`-----BEGIN `, `sk-`, `eyJ`, …) or an `@`;
 * elsewhere the longest pattern with neither (`phone`: 87).
 *
 * @since 0.1.0
 */
import { Effect, Either, Schema, Stream } from "effect"
import { engineOf, type UserPattern } from "./internal/redactionCompile.js"
import * as Guard from "./internal/redactionGuard.js"
import { builtIns } from "./internal/redactionPatterns.js"
import { type Engine, redactAll } from "./internal/redactionScan.js"

/**
 * The built-in kinds.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Kind = Schema.Literal(
  "private_key",
  "anthropic_key",
  "openai_key",
  "aws_access_key_id",
  "aws_secret_key",
  "github_token",
  "slack_token",
  "google_api_key",
  "stripe_key",
  "bearer_token",
  "jwt",
  "email",
  "phone",
  "card_number"
)
/**
 * A built-in kind of secret or personal data.
 *
 * @since 0.1.0
 * @category models
 */
export type Kind = typeof Kind.Type

/**
 * Options a redactor or a guard refused: a user pattern without a bounded
 * length (`unbounded_pattern`), a bad pattern name or a pattern that matches
 * a marker (`invalid_pattern`), or a guard window shorter than the
 * redactor's (`window_too_small`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Redaction } from "effect-agent-pipeline"
 *
 * // `+` has no upper bound: refused.
 * const refused = Redaction.make({ patterns: [{ name: "ticket", regex: /TCK-\d+/, maxLength: 20 }] }).pipe(
 *   Effect.flip,
 *   Effect.map((e) => e.reason) // "unbounded_pattern"
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RedactionError extends Schema.TaggedError<RedactionError>("effect-agent-pipeline/RedactionError")(
  "RedactionError",
  {
    reason: Schema.Literal("unbounded_pattern", "invalid_pattern", "window_too_small"),
    pattern: Schema.optional(Schema.String),
    detail: Schema.String
  }
) {
  override get message(): string {
    return `redaction options refused (${this.reason})${
      this.pattern === undefined ? "" : ` for pattern ${this.pattern}`
    }: ${this.detail}`
  }
}

/**
 * An extra pattern: `name` (a-z, 0-9, `_`) names its marker; `maxLength` is
 * the longest text `regex` can match (bounded quantifiers only: `{m,n}`,
 * `?`). A named group `secret` narrows the finding to that part of the
 * match; `validate` may reject a match by its text.
 *
 * @since 0.1.0
 * @category models
 */
export type Pattern = UserPattern

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The built-in kinds to enable (default: all). */
  readonly kinds?: ReadonlyArray<Kind> | undefined
  /** Extra patterns, enabled in addition to `kinds`. */
  readonly patterns?: ReadonlyArray<Pattern> | undefined
  /** Exact texts never redacted (a public support address, a documented test key). */
  readonly allow?: ReadonlyArray<string> | undefined
}

/**
 * What was found: its kind and range (UTF-16 offsets, end exclusive). It
 * never carries the matched text, so it is safe to log.
 *
 * @since 0.1.0
 * @category models
 */
export interface Finding {
  readonly kind: string
  readonly start: number
  readonly end: number
}

/**
 * The redacted text and the findings (ranges in the original text).
 *
 * @since 0.1.0
 * @category models
 */
export interface RedactionResult {
  readonly text: string
  readonly findings: ReadonlyArray<Finding>
}

const EngineId: unique symbol = Symbol.for("effect-agent-pipeline/Redaction/Engine")

/**
 * A scanner: pure, synchronous, safe to share.
 *
 * @since 0.1.0
 * @category models
 */
export interface Redactor {
  /** The enabled kinds, built-in and extra. */
  readonly kinds: ReadonlyArray<string>
  /** The most text the stream guard holds back (the longest reach of a pattern). */
  readonly window: number
  /** The findings in `text`, merged: one per run of overlapping or adjacent matches. */
  readonly scan: (text: string) => ReadonlyArray<Finding>
  /** `text` with each finding replaced by `[REDACTED:<kind>]`. */
  readonly redact: (text: string) => RedactionResult
  /** @internal */
  readonly [EngineId]: Engine
}

/**
 * Builds a redactor.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Redaction } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const redactor = yield* Redaction.make({ allow: ["support@example.com"] })
 *   const { text, findings } = redactor.redact("key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t, mail ann@example.org")
 *   // text: "key [REDACTED:openai_key], mail [REDACTED:email]"
 *   return findings.map((f) => f.kind) // ["openai_key", "email"]
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Redactor, RedactionError> =>
  Either.match(engineOf(options), {
    onLeft: (refusal) => Effect.fail(new RedactionError(refusal)),
    onRight: (engine) =>
      Effect.succeed({
        kinds: [...new Set(engine.patterns.map((p) => p.kind))],
        window: engine.window,
        scan: (text) => redactAll(engine, text).findings,
        redact: (text) => redactAll(engine, text),
        [EngineId]: engine
      })
  })

/**
 * The guard's state between chunks (opaque).
 *
 * @since 0.1.0
 * @category models
 */
export type GuardState = Guard.State

/**
 * A pure state machine over chunks of a stream: `push` returns the next
 * state and the text that can be released; `end` releases the rest.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamGuard {
  /** The most text held back at any moment. */
  readonly window: number
  readonly initial: GuardState
  readonly push: (state: GuardState, chunk: string) => readonly [GuardState, string]
  readonly end: (state: GuardState) => string
  /** How many characters `state` holds back. */
  readonly held: (state: GuardState) => number
}

/**
 * A stream guard for `redactor`. By default it releases text as soon as no
 * pattern can still start a match covering it (never holding back more than
 * `redactor.window`). With `window`, it holds back exactly that many
 * characters instead (a steady delay); a window shorter than the
 * redactor's is refused: it could release the start of a secret before its
 * end arrives.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Redaction } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const guard = yield* Redaction.streamGuard(yield* Redaction.make())
 *   let state = guard.initial
 *   let shown = ""
 *   for (const chunk of ["token: sk-proj-Ab3dE", "f6hIj9kLm2nOp5qRs8t", " done"]) {
 *     const [next, out] = guard.push(state, chunk)
 *     state = next
 *     shown += out
 *   }
 *   return shown + guard.end(state) // "token: [REDACTED:openai_key] done"
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const streamGuard = (
  redactor: Redactor,
  options: { readonly window?: number | undefined } = {}
): Effect.Effect<StreamGuard, RedactionError> => {
  const engine = redactor[EngineId]
  const window = options.window ?? engine.window
  if (!Number.isInteger(window) || window < engine.window) {
    return Effect.fail(
      new RedactionError({
        reason: "window_too_small",
        detail: `the window must be a whole number ≥ ${engine.window} (the longest reach of an enabled pattern)`
      })
    )
  }
  return Effect.succeed(guardOf(engine, options.window))
}

const guardOf = (engine: Engine, fixed: number | undefined): StreamGuard => ({
  window: fixed ?? engine.window,
  initial: Guard.initial,
  push: (state, chunk) => Guard.push(engine, fixed, state, chunk),
  end: (state) => Guard.end(engine, state),
  held: Guard.held
})

/**
 * Redacts a stream of text chunks (model tokens) with the guarantee of
 * {@link streamGuard}: what the stream emits, concatenated, is the buffered
 * redaction of what it received. Empty releases are not emitted; the held
 * tail is released, redacted, when the stream ends (not when it fails).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Redaction } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const redactor = yield* Redaction.make({ kinds: ["email"] })
 *   const tokens = Stream.make("write to a", "nn@exa", "mple.org today")
 *   const chunks = yield* Stream.runCollect(tokens.pipe(Redaction.redactStream(redactor)))
 *   return [...chunks].join("") // "write to [REDACTED:email] today"
 * })
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const redactStream = (source: Redactor | StreamGuard) => <E, R>(stream: Stream.Stream<string, E, R>) =>
  Stream.suspend(() => {
    const guard = "push" in source ? source : guardOf(source[EngineId], undefined)
    let state = guard.initial
    return stream.pipe(
      Stream.map((chunk) => {
        const [next, out] = guard.push(state, chunk)
        state = next
        return out
      }),
      Stream.concat(Stream.sync(() => guard.end(state))),
      Stream.filter((out) => out.length > 0)
    )
  })

/**
 * The built-in kinds, in the order that names a marker when two findings
 * cover the same range.
 *
 * @since 0.1.0
 * @category constants
 */
export const kinds: ReadonlyArray<Kind> = [
  ...new Set(builtIns.flatMap((b) => Schema.is(Kind)(b.kind) ? [b.kind] : []))
]
