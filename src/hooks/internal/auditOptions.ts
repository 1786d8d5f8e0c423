/**
 * The audit hook's options (issue 23, seed 004 "Audit Logging"): Schemas,
 * so that a price table or the whole of the options can come from
 * configuration or JSON, decoded once into what the hook runs with; what
 * does not decode is one typed error naming the option.
 */
import { Effect, LogLevel, ParseResult, Schema } from "effect"
import { id } from "../../domain/ErrorId.js"

/**
 * What one model costs per million tokens, in the table's currency.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Price = Schema.Struct({
  inputPerMillion: Schema.NonNegative.pipe(Schema.finite()),
  outputPerMillion: Schema.NonNegative.pipe(Schema.finite())
}).annotations({ identifier: "Price" })
/**
 * A decoded {@link Price}.
 *
 * @since 0.1.0
 * @category models
 */
export type Price = typeof Price.Type

/**
 * Prices by model id: `{ "gpt-4.1-mini": { inputPerMillion: 0.4, outputPerMillion: 1.6 } }`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PriceTable = Schema.Record({
  key: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  value: Price
}).annotations({ identifier: "PriceTable" })
/**
 * A decoded {@link PriceTable}.
 *
 * @since 0.1.0
 * @category models
 */
export type PriceTable = typeof PriceTable.Type

/**
 * A {@link PriceTable} as JSON text (an environment variable, a file).
 *
 * @since 0.1.0
 * @category schemas
 */
export const PriceTableFromJson = Schema.parseJson(PriceTable)

const logLevels = ["Trace", "Debug", "Info", "Warning", "Error", "Fatal", "None"] as const

/**
 * The audit hook's options.
 *
 * - `name`: the hook's name (default `model-audit`);
 * - `prices`: the price table; a model it does not price has no cost;
 * - `currency`: the table's currency, an ISO 4217 code (default `USD`);
 * - `logLevel`: the level of the log line (default `Info`; `None`: no line);
 * - `metrics`: whether to update the audit metrics (default `true`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Options = Schema.Struct({
  name: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))),
  prices: Schema.optional(PriceTable),
  currency: Schema.optional(Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/))),
  logLevel: Schema.optional(Schema.Literal(...logLevels)),
  metrics: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "AuditOptions" })
/**
 * The {@link Options} a user writes.
 *
 * @since 0.1.0
 * @category models
 */
export type Options = typeof Options.Encoded

/**
 * The audit hook's options are not valid: `option` names the one (a path,
 * `prices.gpt-4.1-mini.inputPerMillion`), `detail` says why.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidAuditOptions extends Schema.TaggedError<InvalidAuditOptions>(id("InvalidAuditOptions"))(
  "InvalidAuditOptions",
  { option: Schema.String, detail: Schema.String }
) {
  override get message(): string {
    return `invalid audit option ${this.option}: ${this.detail}`
  }
}

/** The options decoded: what the hook runs with. */
export interface AuditConfig {
  readonly name: string
  readonly prices: PriceTable
  /** The table's keys, longest first (for dated model ids, see auditEvent.ts). */
  readonly priceKeys: ReadonlyArray<string>
  readonly currency: string
  readonly logLevel: LogLevel.LogLevel
  readonly metrics: boolean
}

const decode = Schema.decodeUnknown(Options, { onExcessProperty: "error" })

/** Decodes `options` (of any shape: they may come from JSON) into the hook's configuration. */
export const configOf = (options: unknown): Effect.Effect<AuditConfig, InvalidAuditOptions> =>
  decode(options ?? {}).pipe(
    Effect.mapError((error) => {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
      return new InvalidAuditOptions({
        option: issue === undefined || issue.path.length === 0 ? "options" : issue.path.map(String).join("."),
        detail: (issue?.message ?? error.message).slice(0, 500)
      })
    }),
    Effect.map((decoded): AuditConfig => {
      const prices = decoded.prices ?? {}
      return {
        name: decoded.name ?? "model-audit",
        prices,
        priceKeys: Object.keys(prices).sort((a, b) => b.length - a.length),
        currency: decoded.currency ?? "USD",
        logLevel: LogLevel.fromLiteral(decoded.logLevel ?? "Info"),
        metrics: decoded.metrics ?? true
      }
    })
  )
