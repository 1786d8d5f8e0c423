/**
 * The memory execution store's options, checked once when the store is
 * built: a value it cannot run with — `maxRecords: 0` (every record evicted
 * as it is written), a fractional or non-finite cap, a byte cap past any
 * process's memory, a duration that does not parse, a misspelled option —
 * fails construction with a typed error naming the option and its range,
 * rather than being clamped into something the caller did not ask for.
 */
import { Duration, Either, Option, ParseResult, Schema } from "effect"

/** A range of whole numbers, both ends included. */
export interface IntegerRange {
  readonly min: number
  readonly max: number
}

/** The ranges of the memory store's numeric options. */
export const memoryBounds = {
  // Ten million records of even a few hundred bytes is gigabytes: more is a mistake.
  maxRecords: { min: 1, max: 10_000_000 },
  // 16 GiB: past what a Node process should hold in one in-memory store.
  maxBytes: { min: 1, max: 17_179_869_184 }
} as const satisfies Record<string, IntegerRange>

/** The longest retention and sweep period (ten years / one day): longer is a typo. */
const maxRetention = Duration.days(3650)
const maxSweepEvery = Duration.hours(24)

const intIn = ({ max, min }: IntegerRange) =>
  Schema.optional(
    Schema.Number.pipe(
      Schema.filter((n) => (Number.isInteger(n) && n >= min && n <= max) || `must be an integer from ${min} to ${max}`)
    )
  )

const durationIn = (max: Duration.Duration, text: string, orInfinity: boolean) =>
  Schema.declare(
    (u: unknown): u is Duration.DurationInput =>
      u !== undefined &&
      Option.exists(
        Duration.decodeUnknown(u),
        (d) =>
          (orInfinity && !Duration.isFinite(d)) ||
          (Duration.isFinite(d) && Duration.greaterThan(d, Duration.zero) && Duration.lessThanOrEqualTo(d, max))
      ),
    {
      identifier: "DurationInput",
      message: () =>
        `must be a positive duration of at most ${text}${
          orInfinity ? " or Duration.infinity" : ""
        } (a Duration, milliseconds, or a string like "5 minutes")`
    }
  )

const MemoryOptionsSchema = Schema.Struct({
  retention: Schema.optional(
    Schema.Struct({
      normal: durationIn(maxRetention, "3650 days", false),
      error: durationIn(maxRetention, "3650 days", false)
    })
  ),
  maxRecords: intIn(memoryBounds.maxRecords),
  maxBytes: intIn(memoryBounds.maxBytes),
  // Infinity turns the write-time sweep off (the caller sweeps: `purgeExpired`, `sweepAbandoned`).
  sweepEvery: Schema.optional(durationIn(maxSweepEvery, "24 hours", true))
})

const check = Schema.decodeUnknownEither(MemoryOptionsSchema, { onExcessProperty: "error" })

/** Why options were refused: the option's path (`retention.normal`) and what is wrong with it. */
export interface Refused {
  readonly option: string
  readonly detail: string
}

/** The options as given, if valid; otherwise the first problem. */
export const checkMemoryOptions = (options: unknown): Either.Either<void, Refused> =>
  Either.mapBoth(check(options ?? {}), {
    onLeft: (error) => {
      const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      if (first === undefined) return { option: "", detail: error.message }
      return {
        option: first.path.map(String).join("."),
        detail: first._tag === "Unexpected"
          ? "unknown option (options are retention, maxRecords, maxBytes, sweepEvery)"
          : first.message
      }
    },
    onRight: () => undefined
  })
