/**
 * Tools the planner may call, defined with `@effect/ai`'s `Tool` (Schema
 * parameters and results) and registered under a namespace and an agent.
 * A tool's capability is its `Tool` name, so a plan step addresses it as
 * `namespace / agent / capability`.
 *
 * @since 0.1.0
 */
import { Tool } from "@effect/ai"
import { Cause, Context, Duration, Effect, Either, Layer, Option, type ParseResult, Schema } from "effect"
import type { Json, JsonObject } from "../domain/Json.js"
import type { ToolDescriptor } from "../domain/ToolDescriptor.js"
import { provideServices, servicesOf } from "../runtime/internal/handlerContext.js"
import { descriptorOf } from "./internal/toolDescriptors.js"
import { checkResult, defaultMaxResultBytes } from "./internal/toolResult.js"
import { bounded, describe } from "./internal/toolText.js"

/**
 * How one call is bounded.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  /**
   * The largest result, as the UTF-8 size of its JSON text (default 1 MiB;
   * the pipeline passes its `maxToolResultBytes`). Larger: `invalid_result`.
   */
  readonly maxResultBytes?: number | undefined
}

/**
 * A registered tool with its handler, its requirements erased into `R`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolEntry<R = never> {
  readonly namespace: string
  readonly agent: string
  readonly tool: Tool.Any
  /**
   * Decodes parameters, runs the handler, encodes the result and checks it
   * as a JSON value (see {@link entry}).
   */
  readonly call: (parameters: JsonObject, options?: CallOptions) => Effect.Effect<Json, ToolCallFailure, R>
  /** How long a call may run; default: the pipeline's `toolTimeout`. */
  readonly timeout?: Duration.Duration | undefined
}

/**
 * Any tool entry, whatever its handler requires.
 *
 * @since 0.1.0
 * @category models
 */
export type Any = ToolEntry<unknown>

/**
 * What a list of tool entries requires (`ToolEntry<A> | ToolEntry<B>` → `A | B`).
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements<T> = T extends ToolEntry<infer R> ? R : never

/**
 * Why a tool call failed, as recorded on the step.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolCallFailure extends Schema.TaggedError<ToolCallFailure>("effect-agent-pipeline/ToolCallFailure")(
  "ToolCallFailure",
  {
    reason: Schema.Literal(
      "invalid_parameters",
      "tool_failed",
      "invalid_result",
      "tool_defect",
      "unknown_tool",
      "timed_out"
    ),
    detail: Schema.String
  }
) {
  override get message(): string {
    return `${this.reason}: ${this.detail}`
  }
}

/**
 * Registers a tool and its handler.
 *
 * A call decodes the plan's parameters with the tool's parameter Schema
 * (`invalid_parameters`), runs the handler (`tool_failed` for its typed
 * failure, `tool_defect` when it throws or dies), encodes the result with
 * its success Schema and checks it as a JSON value (`invalid_result`): no
 * `bigint`, cycle, function, symbol, class instance (a `Date` included —
 * encode it, e.g. with `Schema.Date`), non-finite number, hole or
 * `undefined` other than an object property (dropped, as `JSON.stringify`
 * does), at most 256 levels deep and at most `maxResultBytes` (1 MiB by
 * default) of JSON text. A result that is nothing (`undefined`, a tool
 * without a success Schema) is `null`. The step keeps a copy: nothing the
 * handler still holds can change it afterwards.
 *
 * @example
 * ```ts
 * import { Tool } from "@effect/ai"
 * import { Effect, Schema } from "effect"
 * import { ToolRegistry } from "effect-agent-pipeline"
 *
 * const StockQuote = Tool.make("stock_quote", {
 *   description: "Latest stock quote for a ticker symbol",
 *   parameters: { symbol: Schema.String },
 *   success: Schema.Struct({ symbol: Schema.String, price: Schema.Number })
 * })
 *
 * const entry = ToolRegistry.entry({
 *   namespace: "demo-tools",
 *   agent: "stock-service",
 *   tool: StockQuote,
 *   handler: ({ symbol }) => Effect.succeed({ symbol, price: 123.4 })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const entry = <T extends Tool.Any, R = never>(options: {
  readonly namespace: string
  readonly agent: string
  readonly tool: T
  readonly handler: (parameters: Tool.Parameters<T>) => Effect.Effect<Tool.Success<T>, Tool.Failure<T>, R>
  /** How long a call may run (default: the pipeline's `toolTimeout` option). */
  readonly timeout?: Duration.DurationInput | undefined
}): ToolEntry<R> => {
  const { tool } = options
  // Tool parameter and result schemas are context-free (the Tool type allows
  // more, but a schema needing services cannot describe JSON tool I/O).
  const decode = Schema.decodeUnknown(tool.parametersSchema as Schema.Schema<unknown, unknown>)
  const encodeSuccess = Schema.encodeUnknown(tool.successSchema as Schema.Schema<unknown, unknown>)
  const handler = options.handler as (parameters: unknown) => Effect.Effect<unknown, unknown, R>
  const runHandler = (decoded: unknown) =>
    Effect.catchAllDefect(Effect.mapError(Effect.suspend(() => handler(decoded)), toolFailed), toolDefect)
  // A success Schema that throws on a hostile value is the result's fault, not a defect.
  const encodeResult = (result: unknown) =>
    Effect.catchAllDefect(Effect.mapError(encodeSuccess(result), invalidResult), resultDefect)
  return {
    namespace: options.namespace,
    agent: options.agent,
    tool,
    timeout: options.timeout === undefined ? undefined : Duration.decode(options.timeout),
    call: (parameters, callOptions) =>
      Effect.flatMap(
        Effect.flatMap(
          Effect.flatMap(Effect.mapError(decode(parameters), invalidParameters), runHandler),
          encodeResult
        ),
        (encoded) => checkOutput(callOptions?.maxResultBytes ?? defaultMaxResultBytes, encoded)
      )
  }
}

/**
 * A tool's result as it enters: checked as a JSON value of at most
 * `maxBytes` (see {@link entry}; a result this module checked is not
 * walked again).
 *
 * @since 0.1.0
 * @category utils
 */
export const checkOutput = (maxBytes: number, encoded: unknown): Effect.Effect<Json, ToolCallFailure> => {
  const checked = checkResult(encoded, maxBytes)
  return Either.isRight(checked)
    ? Effect.succeed(checked.right)
    : Effect.fail(new ToolCallFailure({ reason: "invalid_result", detail: checked.left }))
}

const invalidParameters = (e: ParseResult.ParseError) =>
  new ToolCallFailure({ reason: "invalid_parameters", detail: bounded(e) })
const toolFailed = (e: unknown) => new ToolCallFailure({ reason: "tool_failed", detail: describe(e) })
const toolDefect = (defect: unknown) =>
  Effect.fail(new ToolCallFailure({ reason: "tool_defect", detail: describe(Cause.squash(Cause.die(defect))) }))
const invalidResult = (e: ParseResult.ParseError) =>
  new ToolCallFailure({ reason: "invalid_result", detail: bounded(e) })
const resultDefect = (defect: unknown) =>
  Effect.fail(new ToolCallFailure({ reason: "invalid_result", detail: `encoding it threw: ${describe(defect)}` }))

const keyOf = (namespace: string, agent: string, capability: string) => `${namespace}\u0000${agent}\u0000${capability}`

/**
 * A tool entry's descriptor — what the planner reads: its address, its
 * description and its parameters' JSON Schema — or why it cannot be built
 * (a tool whose Schemas throw when read, or whose description is not a
 * string). A tool added by a hook is described when its result is checked,
 * so a broken one fails that hook run, not the request.
 *
 * @since 0.1.0
 * @category utils
 */
export const describeEntry = <R>(e: ToolEntry<R>): Either.Either<ToolDescriptor, string> => {
  try {
    const descriptor = descriptorOf(e)
    return typeof descriptor.description === "string" && typeof descriptor.capability === "string"
      ? Either.right(descriptor)
      : Either.left("its name and description must be strings")
  } catch (thrown) {
    return Either.left(`its descriptor could not be built: ${describe(thrown)}`)
  }
}

/**
 * The registry service: what the planner may use and how to call it.
 *
 * @since 0.1.0
 * @category services
 */
export class ToolRegistry extends Context.Tag("effect-agent-pipeline/ToolRegistry")<
  ToolRegistry,
  ToolRegistry.Service
>() {}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace ToolRegistry {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    readonly descriptors: ReadonlyArray<ToolDescriptor>
    readonly has: (namespace: string, agent: string, capability: string) => boolean
    /**
     * Calls a tool. Its result is a checked JSON value (see `entry`); a
     * registry written by hand must return one too — the pipeline's tool
     * caller checks what it returns all the same.
     */
    readonly call: (
      namespace: string,
      agent: string,
      capability: string,
      parameters: JsonObject,
      options?: CallOptions
    ) => Effect.Effect<Json, ToolCallFailure>
    /** A tool's own timeout, when its entry has one. */
    readonly timeoutOf?:
      | ((namespace: string, agent: string, capability: string) => Duration.Duration | undefined)
      | undefined
  }
}

/**
 * Builds the registry. Registering the same namespace/agent/capability twice
 * is a defect in the program, reported at construction.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <R>(entries: ReadonlyArray<ToolEntry<R>>): Effect.Effect<ToolRegistry.Service, never, R> =>
  Effect.gen(function*() {
    const context = servicesOf(yield* Effect.context<R>())
    const byKey = new Map<string, ToolEntry<R>>()
    const descriptors: Array<ToolDescriptor> = []
    for (const e of entries) {
      const key = keyOf(e.namespace, e.agent, e.tool.name)
      if (byKey.has(key)) {
        return yield* Effect.dieMessage(`tool ${e.namespace}/${e.agent}/${e.tool.name} is registered twice`)
      }
      byKey.set(key, e)
      descriptors.push(descriptorOf(e))
    }
    return {
      descriptors,
      has: (namespace, agent, capability) => byKey.has(keyOf(namespace, agent, capability)),
      timeoutOf: (namespace, agent, capability) => byKey.get(keyOf(namespace, agent, capability))?.timeout,
      call: (namespace, agent, capability, parameters, options) => {
        const e = byKey.get(keyOf(namespace, agent, capability))
        return e === undefined
          ? Effect.fail(
            new ToolCallFailure({ reason: "unknown_tool", detail: `${namespace}/${agent}/${capability}` })
          )
          : provideServices(e.call(parameters, options), context)
      }
    }
  })

/**
 * The registry as a Layer; the handlers' requirements become the Layer's.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <R>(entries: ReadonlyArray<ToolEntry<R>>): Layer.Layer<ToolRegistry, never, R> =>
  Layer.effect(ToolRegistry, make(entries))

/**
 * Looks a descriptor up.
 *
 * @since 0.1.0
 * @category utils
 */
export const findDescriptor = (
  descriptors: ReadonlyArray<ToolDescriptor>,
  namespace: string,
  agent: string,
  capability: string
): Option.Option<ToolDescriptor> =>
  Option.fromNullable(
    descriptors.find((d) => d.namespace === namespace && d.agent === agent && d.capability === capability)
  )

/**
 * The registry seen by one request: the registered tools plus `extra`
 * (tools a BeforePlanning hook contributed for this request only). The
 * extras come after the registered tools in the descriptors; a key both
 * define is a defect (BeforePlanning refuses such a contribution first).
 *
 * @since 0.1.0
 * @category utils
 */
export const extend = (base: ToolRegistry.Service, extra: ReadonlyArray<ToolEntry<never>>): ToolRegistry.Service => {
  if (extra.length === 0) return base
  const byKey = new Map<string, ToolEntry<never>>()
  for (const e of extra) byKey.set(keyOf(e.namespace, e.agent, e.tool.name), e)
  return {
    descriptors: [...base.descriptors, ...extra.map(descriptorOf)],
    has: (namespace, agent, capability) =>
      byKey.has(keyOf(namespace, agent, capability)) || base.has(namespace, agent, capability),
    timeoutOf: (namespace, agent, capability) => {
      const e = byKey.get(keyOf(namespace, agent, capability))
      return e === undefined ? base.timeoutOf?.(namespace, agent, capability) : e.timeout
    },
    call: (namespace, agent, capability, parameters, options) => {
      const e = byKey.get(keyOf(namespace, agent, capability))
      return e === undefined
        ? base.call(namespace, agent, capability, parameters, options)
        : e.call(parameters, options)
    }
  }
}
