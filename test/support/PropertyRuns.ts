/**
 * How many runs a heavy property test makes: one setting, `EAP_PROPERTY_RUNS`.
 *
 * A heavy property is written with its CI size — the runs CI holds it to —
 * and takes its size for this run from here, never skipped:
 *
 * ```ts
 * // 10,000 runs in CI, 500 under `npm test`
 * FastCheck.assert(property, { numRuns: propertyRuns(10_000) })
 * // 100 runs in CI, 10 under `npm test` (each run builds PostgreSQL tables)
 * it.effect.prop(name, arbitraries, body, { fastCheck: { numRuns: propertyRuns(100) } })
 * ```
 *
 * `EAP_PROPERTY_RUNS`:
 * - unset (or `local`): the local size — a twentieth of the CI size, at
 *   least 10 runs (never more than the CI size), unless the test names its
 *   own (the second argument). What `npm test` runs, to stay within minutes
 *   on a 2-core machine.
 * - `full`: every heavy property runs its CI size. `.ci/run` sets this, so
 *   CI keeps the sizes the properties were written for.
 *
 * Anything else fails the run at once, rather than running a size nobody
 * chose (a typo in CI must not shrink its properties silently).
 * Light properties (a few seconds at their CI size) keep a plain `numRuns`.
 */

/** The local size of a heavy property that names none: a twentieth of its CI size, at least 10 runs. */
export const localRuns = (ci: number): number => Math.min(ci, Math.max(10, Math.ceil(ci / 20)))

const parse = (value: string | undefined): "local" | "full" => {
  const text = value?.trim() ?? ""
  if (text === "" || text === "local") return "local"
  if (text === "full") return "full"
  throw new Error(`EAP_PROPERTY_RUNS must be "full" or "local" (or unset), not ${JSON.stringify(value)}`)
}

/** The setting of this test run: `full` (CI sizes) or `local`. */
export const propertyRunsSetting: "local" | "full" = parse(process.env["EAP_PROPERTY_RUNS"])

/**
 * The runs a heavy property makes in this test run.
 *
 * @param ci - its size in CI (`EAP_PROPERTY_RUNS=full`)
 * @param local - its size under a plain `npm test`; at most `ci`
 */
export const propertyRuns = (ci: number, local: number = localRuns(ci)): number => {
  if (!Number.isInteger(ci) || ci < 1) throw new Error(`propertyRuns: CI size ${ci} is not a whole number ≥ 1`)
  if (!Number.isInteger(local) || local < 1 || local > ci) {
    throw new Error(`propertyRuns: local size ${local} is not a whole number in 1..${ci}`)
  }
  return propertyRunsSetting === "full" ? ci : local
}
