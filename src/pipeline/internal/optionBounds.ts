/**
 * The range of every pipeline option, and the Schema that checks options
 * against them (unknown keys refused): what `PipelineOptions.resolve`
 * decodes with.
 */
import { Duration, Option, Schema } from "effect"
import { ModelCallRecording } from "../../domain/ModelCall.js"
import { mebibyte } from "../../domain/PipelineRequest.js"

export type DurationOption =
  | "checkpointClaimLease"
  | "recordLease"
  | "modelTimeout"
  | "modelRetryDelay"
  | "modelMaxRetryDelay"
  | "toolTimeout"
  | "hookTimeout"
  | "hookGracePeriod"

/**
 * A duration option's range (see `durationBounds`).
 *
 * @since 0.1.0
 */
export interface DurationRange {
  readonly min: Duration.Duration
  /** Whether `min` itself is allowed (otherwise: strictly above it). */
  readonly inclusive: boolean
  readonly max: Duration.Duration
  /** The range in words, for the error detail. */
  readonly text: string
}

const positiveUpTo = (max: Duration.Duration, maxText: string): DurationRange => ({
  min: Duration.zero,
  inclusive: false,
  max,
  text: `above zero and at most ${maxText}`
})

/**
 * One gibibyte: the largest value of every byte limit.
 *
 * @since 0.1.0
 */
export const gibibyte = 1_073_741_824

/**
 * The range of each numeric option (both ends included). Durations are
 * bounded too: see `durationBounds`.
 *
 * @since 0.1.0
 */
export const integerBounds = {
  maxPhases: { min: 1, max: 100 },
  concurrency: { min: 1, max: 1024 },
  shortCircuitChunkBytes: { min: 4, max: mebibyte },
  maxRequestBytes: { min: 1, max: gibibyte },
  maxMetadataBytes: { min: 1, max: gibibyte },
  maxEnrichmentBytes: { min: 1, max: gibibyte },
  maxToolResultBytes: { min: 1, max: gibibyte },
  maxModelOutputBytes: { min: 1, max: gibibyte },
  // A record always has room for its own skeleton (ids, lifecycle, decisions).
  maxRecordBytes: { min: 65_536, max: gibibyte },
  modelRetries: { min: 0, max: 10 },
  planReasks: { min: 0, max: 10 }
} as const

/**
 * The range of each duration option: above `min` (or at least it, when
 * `inclusive`), at most `max`.
 *
 * @since 0.1.0
 */
export const durationBounds: { readonly [K in DurationOption]: DurationRange } = {
  recordLease: {
    min: Duration.seconds(1),
    inclusive: true,
    max: Duration.hours(24),
    text: "from 1 second to 24 hours"
  },
  checkpointClaimLease: positiveUpTo(Duration.hours(24), "24 hours"),
  modelTimeout: positiveUpTo(Duration.hours(24), "24 hours"),
  modelRetryDelay: positiveUpTo(Duration.hours(1), "1 hour"),
  modelMaxRetryDelay: positiveUpTo(Duration.hours(24), "24 hours"),
  toolTimeout: positiveUpTo(Duration.hours(24), "24 hours"),
  hookTimeout: positiveUpTo(Duration.hours(24), "24 hours"),
  hookGracePeriod: positiveUpTo(Duration.hours(1), "1 hour")
}

const intIn = (min: number, max: number) =>
  Schema.optional(Schema.Int.pipe(
    Schema.filter((n) => (n >= min && n <= max) || `must be an integer from ${min} to ${max}`)
  ))

const durationIn = ({ inclusive, max, min, text }: DurationRange) =>
  Schema.optional(
    Schema.declare(
      (u: unknown): u is Duration.DurationInput =>
        u !== undefined &&
        Option.exists(
          Duration.decodeUnknown(u),
          (d) =>
            Duration.isFinite(d) &&
            (inclusive ? Duration.greaterThanOrEqualTo(d, min) : Duration.greaterThan(d, min)) &&
            Duration.lessThanOrEqualTo(d, max)
        ),
      {
        identifier: "DurationInput",
        message: () => `must be a duration ${text} (a Duration, milliseconds, or a string like "5 minutes")`
      }
    )
  )

const OptionsSchema = Schema.Struct({
  maxPhases: intIn(integerBounds.maxPhases.min, integerBounds.maxPhases.max),
  concurrency: intIn(integerBounds.concurrency.min, integerBounds.concurrency.max),
  recording: Schema.optional(Schema.Boolean),
  shortCircuitChunkBytes: intIn(integerBounds.shortCircuitChunkBytes.min, integerBounds.shortCircuitChunkBytes.max),
  maxRequestBytes: intIn(integerBounds.maxRequestBytes.min, integerBounds.maxRequestBytes.max),
  maxMetadataBytes: intIn(integerBounds.maxMetadataBytes.min, integerBounds.maxMetadataBytes.max),
  maxEnrichmentBytes: intIn(integerBounds.maxEnrichmentBytes.min, integerBounds.maxEnrichmentBytes.max),
  maxToolResultBytes: intIn(integerBounds.maxToolResultBytes.min, integerBounds.maxToolResultBytes.max),
  maxModelOutputBytes: intIn(integerBounds.maxModelOutputBytes.min, integerBounds.maxModelOutputBytes.max),
  maxRecordBytes: intIn(integerBounds.maxRecordBytes.min, integerBounds.maxRecordBytes.max),
  recordLease: durationIn(durationBounds.recordLease),
  checkpointClaimLease: durationIn(durationBounds.checkpointClaimLease),
  modelTimeout: durationIn(durationBounds.modelTimeout),
  modelRetries: intIn(integerBounds.modelRetries.min, integerBounds.modelRetries.max),
  modelRetryDelay: durationIn(durationBounds.modelRetryDelay),
  modelMaxRetryDelay: durationIn(durationBounds.modelMaxRetryDelay),
  planReasks: intIn(integerBounds.planReasks.min, integerBounds.planReasks.max),
  toolTimeout: durationIn(durationBounds.toolTimeout),
  modelCalls: Schema.optional(ModelCallRecording),
  hookTimeout: durationIn(durationBounds.hookTimeout),
  hookGracePeriod: durationIn(durationBounds.hookGracePeriod)
})

export const checkOptions = Schema.decodeUnknownEither(OptionsSchema, { onExcessProperty: "error" })
