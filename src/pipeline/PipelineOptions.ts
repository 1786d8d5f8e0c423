/**
 * The pipeline's tuning knobs, their defaults, and the check that turns
 * what a caller wrote into the values the pipeline runs with. Every option
 * has a documented range, both ends ({@link integerBounds},
 * {@link durationBounds}); a bad value (a zero concurrency, a fractional
 * phase count, a million retries, a lease of a year, an unknown option
 * from a JavaScript caller) fails the pipeline Layer with
 * `InvalidPipelineOptions` naming the option and its range, instead of
 * silently running with something else.
 *
 * @since 0.1.0
 */
import { Duration, Either, ParseResult } from "effect"
import * as ModelPolicy from "../ai/ModelPolicy.js"
import { ModelCallRecording } from "../domain/ModelCall.js"
import { InvalidPipelineOptions } from "../domain/PipelineError.js"
import { mebibyte } from "../domain/PipelineRequest.js"
import { checkOptions, type DurationOption } from "./internal/optionBounds.js"

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
 * @category models
 */
export interface PipelineOptions {
  /** Planning phases before synthesis is forced (default 3; an integer from 1 to 100). */
  readonly maxPhases?: number | undefined
  /** Tool calls of one phase in flight at once (default 4; an integer from 1 to 1024). */
  readonly concurrency?: number | undefined
  /** Record execution evidence (default true). Off: nothing is stored and effect reports are no-ops. */
  readonly recording?: boolean | undefined
  /** UTF-8 bytes per token event when a short-circuit answer is streamed (default 64; an integer from 4 to 1 MiB). */
  readonly shortCircuitChunkBytes?: number | undefined
  /** Largest request text in UTF-8 bytes (default 1 MiB, at most 1 GiB). Larger: `InvalidRequest` `too_large`. */
  readonly maxRequestBytes?: number | undefined
  /** Largest request metadata, as the UTF-8 size of its JSON text (default 1 MiB, at most 1 GiB). */
  readonly maxMetadataBytes?: number | undefined
  /**
   * Largest total size of the enrichments (the JSON text of all of them)
   * that BeforePlanning may build up (default 1 MiB, at most 1 GiB). A hook whose changes
   * would exceed it fails open: its changes are dropped and recorded as
   * `fail_open / continue / hook_error`.
   */
  readonly maxEnrichmentBytes?: number | undefined
  /**
   * Largest tool result, as the UTF-8 size of its JSON text (default 1 MiB,
   * at most 1 GiB). A larger result fails its step with `invalid_result`
   * ("result too large"); the record does not keep it, and the request goes
   * on to synthesis.
   */
  readonly maxToolResultBytes?: number | undefined
  /**
   * The most text one model call may answer, in UTF-8 bytes (default 1 MiB,
   * at most 1 GiB): a buffered answer over it fails the stage with
   * `reason: "output_too_large"`; a stream stops at it.
   */
  readonly maxModelOutputBytes?: number | undefined
  /**
   * The largest execution record the recorder writes, as the UTF-8 size of
   * its JSON text (default 16 MiB; from 64 KiB to 1 GiB). What would pass it
   * is cut, and the record says so.
   */
  readonly maxRecordBytes?: number | undefined
  /**
   * How long a running request's record lease holds (default 30 seconds;
   * from 1 second to 24 hours). The pipeline renews its running
   * records' leases every third of it, writing their newest snapshot; a
   * record whose lease ran out (its process died) is marked `abandoned` by
   * the store's sweep.
   */
  readonly recordLease?: Duration.DurationInput | undefined
  /**
   * How long a resume holds the claim on its checkpoint (default 5 minutes;
   * positive, at most 24 hours). While it holds, another resume of the
   * same checkpoint fails with `CheckpointError` `already_claimed`; once it
   * ran out (the resuming process died, or the resume overran it), the
   * checkpoint can be resumed again. Set it above your longest resume.
   */
  readonly checkpointClaimLease?: Duration.DurationInput | undefined
  /**
   * How long one model call may take (default 60 seconds; positive, at most
   * 24 hours): per attempt; for
   * a streamed answer, the longest wait for its next part. An overrun is
   * retried like any transient failure, then fails the stage with
   * `reason: "timed_out"`.
   */
  readonly modelTimeout?: Duration.DurationInput | undefined
  /**
   * Retries of a model call after a transient failure — HTTP 429, 408, 409,
   * 5xx, a refused or reset connection, a provider response that does not
   * parse, a timeout (default 2; an integer from 0 to 10). A stream is retried only
   * before it delivered any text.
   */
  readonly modelRetries?: number | undefined
  /** The first retry's delay, doubled for each next one (default 500 ms; positive, at most 1 hour). */
  readonly modelRetryDelay?: Duration.DurationInput | undefined
  /**
   * The longest delay between retries (default 30 seconds; positive, at most
   * 24 hours). A `retry-after`
   * header is honoured up to it; a provider asking for a longer wait gets
   * no retry (the call fails at once).
   */
  readonly modelMaxRetryDelay?: Duration.DurationInput | undefined
  /**
   * Planning answers that are not a plan are asked again, with the rejected
   * output and the decode error in the prompt, this many times (default 1;
   * an integer from 0 to 10). Then `PlanningError` `invalid_plan`, whose `output`
   * keeps the last answer.
   */
  readonly planReasks?: number | undefined
  /**
   * How long a tool call may run (default 30 seconds, at most 24 hours; a tool entry's own
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
   * own (default 30 seconds, at most 24 hours; a hook's `timeout` or `Hook.deadline(d)`
   * overrides it). Every run of every kind is bounded: stage handlers,
   * transforms, guards (their own time, not the operation's), Around
   * `begin` and `finish`, detached runs. An overrun is interrupted and
   * recorded `timed_out`; then the hook's failure policy decides.
   */
  readonly hookTimeout?: Duration.DurationInput | undefined
  /**
   * How long a hook run that overran (or whose request was canceled) gets to
   * stop once interrupted (default 1 second, at most 1 hour). Work that ignores interruption
   * longer is abandoned — recorded as such — and never holds up the request
   * or shutdown.
   */
  readonly hookGracePeriod?: Duration.DurationInput | undefined
}

/**
 * The range of each option (`integerBounds`, `durationBounds`; every byte
 * limit is at most one `gibibyte`).
 *
 * @since 0.1.0
 * @category constants
 */
export { durationBounds, type DurationRange, gibibyte, integerBounds } from "./internal/optionBounds.js"

/**
 * Options with every default filled in (and durations decoded).
 *
 * @since 0.1.0
 * @category models
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
 * @category constants
 */
export const defaults: Resolved = {
  maxPhases: 3,
  concurrency: 4,
  recording: true,
  shortCircuitChunkBytes: 64,
  maxRequestBytes: mebibyte,
  maxMetadataBytes: mebibyte,
  maxEnrichmentBytes: mebibyte,
  maxToolResultBytes: mebibyte,
  maxModelOutputBytes: ModelPolicy.defaults.maxOutputBytes,
  maxRecordBytes: 16 * mebibyte,
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

/**
 * Validates options and fills in the defaults.
 *
 * @example
 * ```ts
 * import { PipelineOptions } from "effect-agent-pipeline"
 *
 * PipelineOptions.resolve({ concurrency: 0 }) // Left(InvalidPipelineOptions: concurrency: must be an integer from 1 to 1024)
 * PipelineOptions.resolve({ modelRetries: 1e6 }) // Left(InvalidPipelineOptions: modelRetries: must be an integer from 0 to 10)
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const resolve = (options: PipelineOptions | undefined): Either.Either<Resolved, InvalidPipelineOptions> => {
  if (options === undefined) return Either.right(defaults)
  const checked = checkOptions(options)
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
    maxToolResultBytes: given.maxToolResultBytes ?? defaults.maxToolResultBytes,
    maxModelOutputBytes: given.maxModelOutputBytes ?? defaults.maxModelOutputBytes,
    maxRecordBytes: given.maxRecordBytes ?? defaults.maxRecordBytes,
    recordLease: durationOr(given.recordLease, defaults.recordLease),
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
 * @category utils
 */
export const modelPolicy = (options: Resolved): ModelPolicy.ModelPolicy => ({
  timeout: options.modelTimeout,
  retries: options.modelRetries,
  retryDelay: options.modelRetryDelay,
  maxRetryDelay: options.modelMaxRetryDelay,
  planReasks: options.planReasks,
  recordCalls: options.modelCalls,
  maxOutputBytes: options.maxModelOutputBytes
})
