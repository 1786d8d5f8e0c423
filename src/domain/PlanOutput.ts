/**
 * The Schema of the plan a model is asked for (structured output): the one
 * the model seam passes to `generateObject`.
 *
 * Its JSON Schema is the strict wire form ({@link PlanWire}: every field
 * required, absent values `null`, the open `parameters` object as JSON text
 * in `parameters_json`), which OpenAI's strict mode accepts and `RoutingPlan`
 * itself does not. It decodes either form into a `RoutingPlan`: the wire
 * form, or a plain `RoutingPlan` (what models without strict mode, scripted
 * test models and earlier callers return) — a plain plan exactly as the
 * `RoutingPlan` Schema decodes it, errors included.
 *
 * @since 0.1.0
 */
import { ParseResult, Schema, type SchemaAST as AST } from "effect"
import { deeperThan } from "./internal/jsonDepth.js"
import { thrownText } from "./internal/jsonSnapshot.js"
import { isWireShaped, type PlanWire, wireJsonSchema } from "./internal/planWire.js"
import { formatPath, maxDepth } from "./Json.js"
import { PlanFromWire, RoutingPlan } from "./RoutingPlan.js"

const decodeWire = ParseResult.decodeUnknown(PlanFromWire)
const decodePlain = ParseResult.decodeUnknown(RoutingPlan)
const encodeWire = ParseResult.encodeUnknown(PlanFromWire)

/** The issue of a value nested deeper than `Json.maxDepth` (or that cannot be read), if it is one. */
const tooDeep = (input: unknown, ast: AST.Declaration): ParseResult.ParseIssue | undefined => {
  try {
    const deep = deeperThan(input, maxDepth)
    return deep === undefined
      ? undefined
      : new ParseResult.Type(
        ast,
        input,
        `the plan nests deeper than ${maxDepth} levels (at ${formatPath("plan", deep)})`
      )
  } catch (thrown) {
    return new ParseResult.Type(ast, input, `the plan could not be read: ${thrownText(thrown)}`)
  }
}

/**
 * The Schema of a model's plan: what the model seam passes to
 * `generateObject`. Providers derive the strict {@link wireJsonSchema} from it;
 * it decodes the wire form or a plain `RoutingPlan` into a `RoutingPlan`, and
 * encodes to the wire form.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { PlanOutput } from "effect-agent-pipeline"
 *
 * const decode = Schema.decodeUnknownSync(PlanOutput.PlanOutput)
 * decode({
 *   reasoning: null,
 *   steps: [{
 *     step_id: "w1", namespace: "demo", agent: "weather", capability: "forecast",
 *     parameters_json: "{\"city\":\"Paris\"}", depends_on: [], implicit_deps: [], metadata_json: null
 *   }],
 *   terminal: true
 * })
 * decode({ steps: [] }) // a plain RoutingPlan decodes too: { steps: [], terminal: true }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PlanOutput: Schema.Schema<RoutingPlan, typeof PlanWire.Encoded> = Schema.declare([], {
  decode: () => (input, options, ast) => {
    // Nesting is bounded before a Schema (or the formatter printing its
    // error) recurses into the value.
    const deep = tooDeep(input, ast)
    if (deep !== undefined) return ParseResult.fail(deep)
    return isWireShaped(input) ? decodeWire(input, options) : decodePlain(input, options)
  },
  encode: () => (input, options) => encodeWire(input, options)
}, {
  // Same name as the plain Schema, so a plain plan's parse errors read the same.
  identifier: "RoutingPlan",
  description: "A routing plan: the tool calls (steps) that answer the request",
  jsonSchema: wireJsonSchema
})
