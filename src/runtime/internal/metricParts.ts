/**
 * The parts the pipeline's metrics are built from: histogram boundaries,
 * unit labels, and a bounded cache of tag sets (Effect caches a metric's
 * hooks by the identity of its tag array).
 *
 * A unit is a `unit` tag because Effect's metric keys have no unit field:
 * `@effect/opentelemetry`'s exporters read a metric's unit from that tag
 * (and, left alone, also send it as an attribute of every data point);
 * `effect-agent-pipeline/otel` sends it as the unit only (otel/Telemetry.ts).
 */
import { MetricBoundaries, MetricLabel } from "effect"

/** Millisecond bounds from 10 µs to 2 minutes (hooks and tools are often sub-millisecond). */
export const millisecondBounds = MetricBoundaries.fromIterable([
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  25,
  50,
  100,
  250,
  500,
  1_000,
  2_500,
  5_000,
  10_000,
  30_000,
  60_000,
  120_000
])

/** The bucket bounds the GenAI semantic conventions advise for token counts. */
export const tokenBounds = MetricBoundaries.fromIterable([
  1,
  4,
  16,
  64,
  256,
  1_024,
  4_096,
  16_384,
  65_536,
  262_144,
  1_048_576,
  4_194_304,
  16_777_216,
  67_108_864
])

/** The bucket bounds the GenAI semantic conventions advise for operation durations, in seconds. */
export const secondBounds = MetricBoundaries.fromIterable([
  0.01,
  0.02,
  0.04,
  0.08,
  0.16,
  0.32,
  0.64,
  1.28,
  2.56,
  5.12,
  10.24,
  20.48,
  40.96,
  81.92
])

export type Labels = ReadonlyArray<MetricLabel.MetricLabel>

export const millisecondsUnit = MetricLabel.make("unit", "ms")
export const callsUnit = MetricLabel.make("unit", "{call}")
export const tokensUnit = MetricLabel.make("unit", "{token}")
export const secondsUnit = MetricLabel.make("unit", "s")

export const labels = (unit: MetricLabel.MetricLabel, tags: ReadonlyArray<readonly [string, string]>): Labels =>
  Object.freeze([...tags.map(([key, value]) => MetricLabel.make(key, value)), unit])

/**
 * A cache of tag sets by key. Effect's metric hooks are cached by the
 * identity of the tag array, so reusing one array per series is what keeps
 * an update a lookup; past `limit` keys (unbounded names), sets are built
 * per update instead of growing the cache.
 */
export const cacheOf = (limit: number) => {
  const cache = new Map<string, Labels>()
  return (key: string, make: () => Labels): Labels => {
    const found = cache.get(key)
    if (found !== undefined) return found
    const made = make()
    if (cache.size < limit) cache.set(key, made)
    return made
  }
}
