/**
 * Arbitrary JSON for property tests: finite numbers only, `-0` normalised
 * to `0` (JSON has neither NaN nor a negative zero), small nested values.
 */
import { FastCheck } from "effect"
import type { Json } from "../../src/domain/Json.js"

/** A finite double, with `-0` normalised to `0`. */
export const finiteNumber: FastCheck.Arbitrary<number> = FastCheck.double({ noNaN: true, noDefaultInfinity: true }).map(
  (
    n
  ) => (n === 0 ? 0 : n)
)

/** A JSON value; arrays and objects hold at most `maxSize` members. */
export const jsonArbitrary = (maxSize = 4): FastCheck.Arbitrary<Json> =>
  FastCheck.letrec<{ json: Json }>((tie) => ({
    json: FastCheck.oneof(
      { depthSize: "small", withCrossShrink: true },
      FastCheck.constant(null),
      FastCheck.boolean(),
      finiteNumber,
      FastCheck.string(),
      FastCheck.array(tie("json"), { maxLength: maxSize }),
      FastCheck.dictionary(FastCheck.string(), tie("json"), { maxKeys: maxSize })
    )
  })).json
