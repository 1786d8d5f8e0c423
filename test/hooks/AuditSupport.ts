/**
 * What the audit tests share (test/hooks/Audit*.test.ts): an agent on a
 * scripted model (test/support/FlakyModel.ts) with the audit hook, its
 * identity (`ModelIdentity`) added when given; the audit effects of a
 * record; a Logger that keeps its lines; a TestClock driver.
 */
import { Context, type Duration, Effect, Fiber, HashMap, Layer, Logger, Option, Schema, TestClock } from "effect"
import { Agent, type ExecutionRecord, ExecutionStore, type Hook, Pipeline } from "effect-agent-pipeline"
import { allTools } from "../../examples/shared/DemoTools.js"
import { type ModelIdentity, withIdentity } from "../../src/ai/internal/modelClient.js"
import * as Audit from "../../src/hooks/Audit.js"
import * as Flaky from "../support/FlakyModel.js"
import { plan, quoteStep } from "../support/Harness.js"

/** A first phase that asks for another. */
export const PLAN_MORE = JSON.stringify(plan([quoteStep("q1")], false))
export const NO_STEPS = JSON.stringify(plan([]))
export const GPT = { "gpt-4.1-mini": { inputPerMillion: 0.4, outputPerMillion: 1.6 } }

export interface Setup {
  readonly replies: ReadonlyArray<Flaky.Reply>
  readonly fallback?: ReadonlyArray<Flaky.Reply>
  readonly identity?: ModelIdentity.Service
  readonly audit?: Audit.Options
  readonly options?: Pipeline.PipelineOptions
  readonly hooks?: ReadonlyArray<Hook.Hook<never>>
}

export const agent = (setup: Setup) =>
  Effect.gen(function*() {
    const primary = Flaky.make(setup.replies)
    const fallback = setup.fallback === undefined ? undefined : Flaky.make(setup.fallback)
    const audit = yield* Audit.hook(setup.audit)
    const context = yield* Layer.build(Agent.layer({
      model: setup.identity === undefined ? primary.layer : withIdentity(primary.layer, setup.identity),
      fallbackModel: fallback?.layer,
      tools: allTools,
      hooks: [audit, ...(setup.hooks ?? [])],
      options: setup.options
    }))
    const pipeline = Context.get(context, Pipeline.Pipeline)
    const store = Context.get(context, ExecutionStore.ExecutionStore)
    const record = (requestId: string) =>
      Effect.map(Effect.orDie(store.get(requestId)), (r) =>
        Option.getOrThrowWith(r, () => new Error(`no record ${requestId}`)))
    return { pipeline, record, store, primary }
  })

/** The audit effects of a record, in order. */
export const auditEffects = (record: ExecutionRecord.ExecutionRecord, name = "model-audit") =>
  record.hookInvocations.filter((i) => i.name === name).flatMap((i) => i.effects)

export const dataOf = (record: ExecutionRecord.ExecutionRecord) =>
  auditEffects(record).map((e) => Schema.decodeUnknownSync(Audit.AuditEvent)(e.data))

/** Runs `effect` in a fiber and moves the TestClock on by `by` until it is done. */
export const driven = <A, E>(effect: Effect.Effect<A, E>, by: Duration.DurationInput, steps = 40) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(effect)
    for (let i = 0; i < steps; i++) {
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) break
      yield* TestClock.adjust(by)
    }
    return yield* Fiber.join(fiber)
  })

export interface Line {
  readonly message: ReadonlyArray<unknown>
  readonly level: string
  readonly annotations: Readonly<Record<string, unknown>>
}

/** A Logger that keeps every line (message, level, annotations). */
export const capture = () => {
  const lines: Array<Line> = []
  const logger = Logger.make(({ annotations, logLevel, message }) => {
    lines.push({
      message: Array.isArray(message) ? message : [message],
      level: logLevel.label,
      annotations: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
  return { lines, layer: Logger.add(logger) }
}

export const auditLines = (lines: ReadonlyArray<Line>) => lines.filter((l) => l.message.includes(Audit.logMessage))
