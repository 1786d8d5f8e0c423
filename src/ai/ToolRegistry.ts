/**
 * Tools the planner may call, defined with `@effect/ai`'s `Tool` (Schema
 * parameters and results) and registered under a namespace and an agent.
 * A tool's capability is its `Tool` name, so a plan step addresses it as
 * `namespace / agent / capability`.
 *
 * @since 0.1.0
 */
import { Tool } from "@effect/ai"
import { Cause, Context, Duration, Effect, Layer, Option, type ParseResult, Schema } from "effect"
import { isJson, type Json, type JsonObject } from "../domain/Json.js"
import type { ToolDescriptor } from "../domain/ToolDescriptor.js"
import { provideServices, servicesOf } from "../runtime/internal/handlerContext.js"

/**
 * A registered tool with its handler, its requirements erased into `R`.
 *
 * @since 0.1.0
 */
export interface ToolEntry<R = never> {
  readonly namespace: string
  readonly agent: string
  readonly tool: Tool.Any
  /** Decodes parameters, runs the handler, encodes the result to JSON. */
  readonly call: (parameters: JsonObject) => Effect.Effect<Json, ToolCallFailure, R>
  /** How long a call may run; default: the pipeline's `toolTimeout`. */
  readonly timeout?: Duration.Duration | undefined
}

/**
 * Any tool entry, whatever its handler requires.
 *
 * @since 0.1.0
 */
export type Any = ToolEntry<unknown>

/**
 * What a list of tool entries requires (`ToolEntry<A> | ToolEntry<B>` → `A | B`).
 *
 * @since 0.1.0
 */
export type Requirements<T> = T extends ToolEntry<infer R> ? R : never

/**
 * Why a tool call failed, as recorded on the step.
 *
 * @since 0.1.0
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

const toJson = (u: unknown): Json => (u === undefined ? null : isJson(u) ? u : JSON.parse(JSON.stringify(u)))

const describe = (u: unknown): string => {
  if (u instanceof Error) return u.message
  if (typeof u === "string") return u
  try {
    return JSON.stringify(u)
  } catch {
    return String(u)
  }
}

/**
 * Registers a tool and its handler.
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
  // The steps of a call are built once per tool (a closure made per call
  // would lose its optimized code at every full GC that finds none alive).
  const runHandler = (decoded: unknown) =>
    Effect.catchAllDefect(Effect.mapError(Effect.suspend(() => handler(decoded)), toolFailed), toolDefect)
  const encodeResult = (result: unknown) => Effect.mapError(Effect.map(encodeSuccess(result), toJson), invalidResult)
  return {
    namespace: options.namespace,
    agent: options.agent,
    tool,
    timeout: options.timeout === undefined ? undefined : Duration.decode(options.timeout),
    call: (parameters) =>
      Effect.flatMap(Effect.flatMap(Effect.mapError(decode(parameters), invalidParameters), runHandler), encodeResult)
  }
}

const invalidParameters = (e: ParseResult.ParseError) =>
  new ToolCallFailure({ reason: "invalid_parameters", detail: e.message })
const toolFailed = (e: unknown) => new ToolCallFailure({ reason: "tool_failed", detail: describe(e) })
const toolDefect = (defect: unknown) =>
  Effect.fail(new ToolCallFailure({ reason: "tool_defect", detail: describe(Cause.squash(Cause.die(defect))) }))
const invalidResult = (e: ParseResult.ParseError) => new ToolCallFailure({ reason: "invalid_result", detail: e.message })

const keyOf = (namespace: string, agent: string, capability: string) => `${namespace}\u0000${agent}\u0000${capability}`

/** How the planner sees a tool. */
const descriptorOf = <R>(e: ToolEntry<R>): ToolDescriptor => ({
  namespace: e.namespace,
  agent: e.agent,
  capability: e.tool.name,
  description: e.tool.description ?? "",
  parameters: toJson(Tool.getJsonSchema(e.tool as Parameters<typeof Tool.getJsonSchema>[0])) as JsonObject
})

/**
 * The registry service: what the planner may use and how to call it.
 *
 * @since 0.1.0
 */
export class ToolRegistry extends Context.Tag("effect-agent-pipeline/ToolRegistry")<
  ToolRegistry,
  ToolRegistry.Service
>() {}

/** @since 0.1.0 */
export declare namespace ToolRegistry {
  /** @since 0.1.0 */
  export interface Service {
    readonly descriptors: ReadonlyArray<ToolDescriptor>
    readonly has: (namespace: string, agent: string, capability: string) => boolean
    readonly call: (
      namespace: string,
      agent: string,
      capability: string,
      parameters: JsonObject
    ) => Effect.Effect<Json, ToolCallFailure>
    /** A tool's own timeout, when its entry has one. */
    readonly timeoutOf?: ((namespace: string, agent: string, capability: string) => Duration.Duration | undefined) | undefined
  }
}

/**
 * Builds the registry. Registering the same namespace/agent/capability twice
 * is a defect in the program, reported at construction.
 *
 * @since 0.1.0
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
      call: (namespace, agent, capability, parameters) => {
        const e = byKey.get(keyOf(namespace, agent, capability))
        return e === undefined
          ? Effect.fail(
            new ToolCallFailure({ reason: "unknown_tool", detail: `${namespace}/${agent}/${capability}` })
          )
          : provideServices(e.call(parameters), context)
      }
    }
  })

/**
 * The registry as a Layer; the handlers' requirements become the Layer's.
 *
 * @since 0.1.0
 */
export const layer = <R>(entries: ReadonlyArray<ToolEntry<R>>): Layer.Layer<ToolRegistry, never, R> =>
  Layer.effect(ToolRegistry, make(entries))

/**
 * Looks a descriptor up.
 *
 * @since 0.1.0
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
    call: (namespace, agent, capability, parameters) => {
      const e = byKey.get(keyOf(namespace, agent, capability))
      return e === undefined ? base.call(namespace, agent, capability, parameters) : e.call(parameters)
    }
  }
}
