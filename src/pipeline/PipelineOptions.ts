/**
 * The pipeline's tuning knobs, their defaults, and the check that turns
 * what a caller wrote into the values the pipeline runs with. A bad value
 * (a zero concurrency, a fractional phase count, an unknown option from a
 * JavaScript caller) fails the pipeline Layer with `InvalidPipelineOptions`
 * instead of silently running with something else.
 *
 * @since 0.1.0
 */
import { Duration, Either, Option, ParseResult, Schema } from "effect"
import * as ModelPolicy from "../ai/ModelPolicy.js"
import { ModelCallRecording } from "../domain/ModelCall.js"
import { InvalidPipelineOptions } from "../domain/PipelineError.js"
import { MEBIBYTE } from "../domain/PipelineRequest.js"

/**
 * Pipeline options; every field is optional.
 *
 * @example
 * ```ts
 * import type { Pipeline } from "effect-agent-pipeline"
 *
 * const options: Pipeline.PipelineOptions = {
 *   maxPhases: 2,
 *   concurrency: 8,
 *   maxRequestBytes: 64 * 1024,
 *   checkpointClaimLease: "15 minutes"
 * }
 * ```
 *
 * @since 0.1.0
 */
export interface PipelineOptions {
  /** Planning phases before synthesis is forced (default 3; an integer ≥ 1). */
  readonly maxPhases?: number | undefined
  /** Tool calls of one phase in flight at once (default 4; an integer ≥ 1). */
  readonly concurrency?: number | undefined
  /** Record execution evidence (default true). Off: nothing is stored and effect reports are no-ops. */
  readonly recording?: boolean | undefined
  /** UTF-8 bytes per token event when a short-circuit answer is streamed (default 64; an integer ≥ 4). */
  readonly shortCircuitChunkBytes?: number | undefined
  /** Largest request text in UTF-8 bytes (default 1 MiB). Larger: `InvalidRequest` `too_large`. */
  readonly maxRequestBytes?: number | undefined
  /** Largest request metadata, as the UTF-8 size of its JSON text (default 1 MiB). */
  readonly maxMetadataBytes?: number | undefined
  /**
   * Largest total size of the enrichments (the JSON text of all of them)
   * that BeforePlanning may build up (default 1 MiB). A hook whose changes
   * would exceed it fails open: its changes are dropped and recorded as
   * `fail_open / continue / hook_error`.
   */
  readonly maxEnrichmentBytes?: number | undefined
  /**
   * How long a running request's record lease holds (default 30 seconds,
   * at least 1 second). The pipeline renews its running
   * records' leases every third of it, writing their newest snapshot; a
   * record whose lease ran out (its process died) is marked `abandoned` by
   * the store's sweep.
   */
  readonly recordLease?: Duration.DurationInput | undefined
  /**
   * How long a resume holds the claim on its checkpoint (default 5 minutes;
   * a positive, finite duration). While it holds, another resume of the
   * same checkpoint fails with `CheckpointError` `already_claimed`; once it
   * ran out (the resuming process died, or the resume overran it), the
   * checkpoint can be resumed again. Set it above your longest resume.
   */
  readonly checkpointClaimLease?: Duration.DurationInput | undefined
  /**
   * How long one model call may take (default 60 seconds): per attempt; for
   * a streamed answer, the longest wait for its next part. An overrun is
   * retried like any transient failure, then fails the stage with
   * `reason: "timed_out"`.
   */
  readonly modelTimeout?: Duration.DurationInput | undefined
  /**
   * Retries of a model call after a transient failure — HTTP 429, 408, 409,
   * 5xx, a refused or reset connection, a provider response that does not
   * parse, a timeout (default 2; an integer ≥ 0). A stream is retried only
   * before it delivered any text.
   */
  readonly modelRetries?: number | undefined
  /** The first retry's delay, doubled for each next one (default 500 ms). */
  readonly modelRetryDelay?: Duration.DurationInput | undefined
  /**
   * The longest delay between retries (default 30 seconds). A `retry-after`
   * header is honoured up to it; a provider asking for a longer wait gets
   * no retry (the call fails at once).
   */
  readonly modelMaxRetryDelay?: Duration.DurationInput | undefined
  /**
   * Planning answers that are not a plan are asked again, with the rejected
   * output and the decode error in the prompt, this many times (default 1;
   * an integer ≥ 0). Then `PlanningError` `invalid_plan`, whose `output`
   * keeps the last answer.
   */
  readonly planReasks?: number | undefined
  /**
   * How long a tool call may run (default 30 seconds; a tool entry's own
   * `timeout` overrides it). An overrun interrupts the tool; its step fails
   * with `timed_out` and the request goes on.
   */
  readonly toolTimeout?: Duration.DurationInput | undefined
  /**
   * What the record keeps of each model call (`modelCalls`): `"full"`
   * (default) — prompt, raw output, tokens, timing, outcome; `"metadata"` —
   * all but the prompt and the output, where prompts are sensitive;
   * `"off"` — nothing.
   */
  readonly modelCalls?: ModelCallRecording | undefined
  /**
   * How long one run of a hook may take when the hook sets no bound of its
   * own (default 30 seconds; a hook's `timeout` or `Hook.deadline(d)`
   * overrides it). Every run of every kind is bounded: stage handlers,
   * transforms, guards (their own time, not the operation's), Around
   * `begin` and `finish`, detached runs. An overrun is interrupted and
   * recorded `timed_out`; then the hook's failure policy decides.
   */
  readonly hookTimeout?: Duration.DurationInput | undefined
  /**
   * How long a hook run that overran (or whose request was canceled) gets to
   * stop once interrupted (default 1 second). Work that ignores interruption
   * longer is abandoned — recorded as such — and never holds up the request
   * or shutdown.
   */
  readonly hookGracePeriod?: Duration.DurationInput | undefined
}

type DurationOption =
  | "checkpointClaimLease"
  | "recordLease"
  | "modelTimeout"
  | "modelRetryDelay"
  | "modelMaxRetryDelay"
  | "toolTimeout"
  | "hookTimeout"
  | "hookGracePeriod"

/**
 * Options with every default filled in (and durations decoded).
 *
 * @since 0.1.0
 */
export type Resolved =
  & {
    readonly [K in Exclude<keyof PipelineOptions, DurationOption>]-?: Exclude<PipelineOptions[K], undefined>
  }
  & { readonly [K in DurationOption]: Duration.Duration }

/**
 * The defaults.
 *
 * @since 0.1.0
 */
export const defaults: Resolved = {
  maxPhases: 3,
  concurrency: 4,
  recording: true,
  shortCircuitChunkBytes: 64,
  maxRequestBytes: MEBIBYTE,
  maxMetadataBytes: MEBIBYTE,
  maxEnrichmentBytes: MEBIBYTE,
  recordLease: Duration.seconds(30),
  checkpointClaimLease: Duration.minutes(5),
  modelTimeout: ModelPolicy.defaults.timeout,
  modelRetries: ModelPolicy.defaults.retries,
  modelRetryDelay: ModelPolicy.defaults.retryDelay,
  modelMaxRetryDelay: ModelPolicy.defaults.maxRetryDelay,
  planReasks: ModelPolicy.defaults.planReasks,
  toolTimeout: Duration.seconds(30),
  modelCalls: ModelPolicy.defaults.recordCalls,
  hookTimeout: Duration.seconds(30),
  hookGracePeriod: Duration.seconds(1)
}

const atLeast = (min: number) =>
  Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(min, { message: () => `must be an integer ≥ ${min}` })))

const isPositiveDuration = (u: unknown): u is Duration.DurationInput =>
  u !== undefined &&
  Option.exists(Duration.decodeUnknown(u), (d) => Duration.isFinite(d) && Duration.greaterThan(d, Duration.zero))

const positiveDuration = Schema.optional(
  Schema.declare(isPositiveDuration, {
    identifier: "DurationInput",
    message: () => 'must be a positive, finite duration (a Duration, milliseconds, or a string like "5 minutes")'
  })
)

const atLeastDuration = (min: Duration.Duration) =>
  Schema.optional(
    Schema.declare(
      (u: unknown): u is Duration.DurationInput =>
        u !== undefined &&
        Option.exists(Duration.decodeUnknown(u), (d) => Duration.isFinite(d) && Duration.greaterThanOrEqualTo(d, min)),
      {
        identifier: "DurationInput",
        message: () => `must be a finite duration of at least ${Duration.format(min)}`
      }
    )
  )

const OptionsSchema = Schema.Struct({
  maxPhases: atLeast(1),
  concurrency: atLeast(1),
  recording: Schema.optional(Schema.Boolean),
  shortCircuitChunkBytes: atLeast(4),
  maxRequestBytes: atLeast(1),
  maxMetadataBytes: atLeast(1),
  maxEnrichmentBytes: atLeast(1),
  recordLease: atLeastDuration(Duration.seconds(1)),
  checkpointClaimLease: positiveDuration,
  modelTimeout: positiveDuration,
  modelRetries: atLeast(0),
  modelRetryDelay: positiveDuration,
  modelMaxRetryDelay: positiveDuration,
  planReasks: atLeast(0),
  toolTimeout: positiveDuration,
  modelCalls: Schema.optional(ModelCallRecording),
  hookTimeout: positiveDuration,
  hookGracePeriod: positiveDuration
})

const check = Schema.decodeUnknownEither(OptionsSchema, { onExcessProperty: "error" })

/**
 * Validates options and fills in the defaults.
 *
 * @example
 * ```ts
 * import { PipelineOptions } from "effect-agent-pipeline"
 *
 * PipelineOptions.resolve({ concurrency: 0 }) // Left(InvalidPipelineOptions: concurrency: must be an integer ≥ 1)
 * ```
 *
 * @since 0.1.0
 */
export const resolve = (options: PipelineOptions | undefined): Either.Either<Resolved, InvalidPipelineOptions> => {
  if (options === undefined) return Either.right(defaults)
  const checked = check(options)
  if (Either.isLeft(checked)) {
    const first = ParseResult.ArrayFormatter.formatErrorSync(checked.left)[0]
    const option = first?.path.map(String).join(".") ?? ""
    const detail = first === undefined
      ? checked.left.message
      : first._tag === "Unexpected"
      ? `unknown option (options are ${Object.keys(defaults).join(", ")})`
      : first.message
    return Either.left(new InvalidPipelineOptions({ option, detail }))
  }
  const given = checked.right
  return Either.right({
    maxPhases: given.maxPhases ?? defaults.maxPhases,
    concurrency: given.concurrency ?? defaults.concurrency,
    recording: given.recording ?? defaults.recording,
    shortCircuitChunkBytes: given.shortCircuitChunkBytes ?? defaults.shortCircuitChunkBytes,
    maxRequestBytes: given.maxRequestBytes ?? defaults.maxRequestBytes,
    maxMetadataBytes: given.maxMetadataBytes ?? defaults.maxMetadataBytes,
    maxEnrichmentBytes: given.maxEnrichmentBytes ?? defaults.maxEnrichmentBytes,
    recordLease: given.recordLease === undefined ? defaults.recordLease : Duration.decode(given.recordLease),
    // Decoded once (an input may be a string to parse).
    checkpointClaimLease: durationOr(given.checkpointClaimLease, defaults.checkpointClaimLease),
    modelTimeout: durationOr(given.modelTimeout, defaults.modelTimeout),
    modelRetries: given.modelRetries ?? defaults.modelRetries,
    modelRetryDelay: durationOr(given.modelRetryDelay, defaults.modelRetryDelay),
    modelMaxRetryDelay: durationOr(given.modelMaxRetryDelay, defaults.modelMaxRetryDelay),
    planReasks: given.planReasks ?? defaults.planReasks,
    toolTimeout: durationOr(given.toolTimeout, defaults.toolTimeout),
    modelCalls: given.modelCalls ?? defaults.modelCalls,
    hookTimeout: durationOr(given.hookTimeout, defaults.hookTimeout),
    hookGracePeriod: durationOr(given.hookGracePeriod, defaults.hookGracePeriod)
  })
}

const durationOr = (given: Duration.DurationInput | undefined, fallback: Duration.Duration): Duration.Duration =>
  given === undefined ? fallback : Duration.decode(given)

/**
 * The model policy the options describe.
 *
 * @since 0.1.0
 */
export const modelPolicy = (options: Resolved): ModelPolicy.ModelPolicy => ({
  timeout: options.modelTimeout,
  retries: options.modelRetries,
  retryDelay: options.modelRetryDelay,
  maxRetryDelay: options.modelMaxRetryDelay,
  planReasks: options.planReasks,
  recordCalls: options.modelCalls
})
