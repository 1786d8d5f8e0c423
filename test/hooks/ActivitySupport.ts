/**
 * Shared by the activity hook tests: a tool that works on the `Clock`, an
 * activity store that counts what was asked of it (and can be made to fail
 * or to signal a test), and an agent over the scripted model with the
 * activity hooks registered.
 */
import { Tool } from "@effect/ai"
import { Context, Effect, Layer, Schema } from "effect"
import {
  Activity,
  ActivityStore,
  Agent,
  type Approval,
  type Hook,
  Pipeline,
  type ScriptedModel,
  ToolRegistry
} from "effect-agent-pipeline"

export const Work = Tool.make("work", {
  description: "Does some work that takes time",
  parameters: { millis: Schema.Number },
  success: Schema.String
})

/** Sleeps `millis` on the Clock (TestClock in tests), then answers. */
export const work = ToolRegistry.entry({
  namespace: "test-tools",
  agent: "worker",
  tool: Work,
  handler: ({ millis }) => Effect.as(Effect.sleep(millis), `worked ${millis} ms`),
  // Long work (past the default 30 s tool timeout) is what these tests are about.
  timeout: "10 minutes"
})

export const workStep = (stepId: string, millis: number) => ({
  step_id: stepId,
  namespace: "test-tools",
  agent: "worker",
  capability: "work",
  parameters: { millis }
})

/** Per signal id: how often each store call was made for it. */
export interface Calls {
  announce: number
  renew: number
  remove: number
}

/** A store that counts calls per signal id, and may fail or hook into them. */
export interface CountingStore {
  readonly service: ActivityStore.ActivityStore.Service
  readonly calls: Map<string, Calls>
  /** Signals announced and not removed since (what this process left behind). */
  readonly live: Set<string>
  /** Called before each store call, and after a successful one (a test's tripwires). */
  before: (operation: keyof Calls, signalId: string) => Effect.Effect<void>
  after: (operation: keyof Calls, signalId: string) => Effect.Effect<void>
  /** When set, renewals fail. */
  failRenewals: boolean
}

export const counting = (inner: ActivityStore.ActivityStore.Service): CountingStore => {
  const calls = new Map<string, Calls>()
  const live = new Set<string>()
  const count = (operation: keyof Calls, signalId: string) => {
    const entry = calls.get(signalId) ?? { announce: 0, renew: 0, remove: 0 }
    entry[operation]++
    calls.set(signalId, entry)
  }
  const self: CountingStore = {
    calls,
    live,
    before: () => Effect.void,
    after: () => Effect.void,
    failRenewals: false,
    service: {
      announce: (signal, ttl) =>
        Effect.suspend(() => {
          count("announce", signal.signalId)
          return Effect.zipRight(self.before("announce", signal.signalId), inner.announce(signal, ttl)).pipe(
            Effect.tap(() => Effect.sync(() => live.add(signal.signalId))),
            Effect.tap(() => self.after("announce", signal.signalId))
          )
        }),
      renew: (signalId, ttl) =>
        Effect.suspend(() => {
          count("renew", signalId)
          return self.failRenewals
            ? Effect.fail(new ActivityStore.ActivityStoreError({ operation: "renew", detail: "backend down" }))
            : Effect.zipRight(self.before("renew", signalId), inner.renew(signalId, ttl))
        }),
      remove: (signalId) =>
        Effect.suspend(() => {
          count("remove", signalId)
          return Effect.zipRight(self.before("remove", signalId), inner.remove(signalId)).pipe(
            Effect.tap(() => Effect.sync(() => live.delete(signalId))),
            Effect.tap(() => self.after("remove", signalId))
          )
        }),
      listActive: (domain, options) => inner.listActive(domain, options)
    }
  }
  return self
}

export interface ActivityAgent {
  readonly pipeline: Pipeline.Pipeline.Service
  readonly test: Agent.TestAgent.Service
}

/**
 * An agent over the scripted model and the `work` tool, with `hooks`
 * (include the activity hooks where they belong) and `store` as its
 * ActivityStore.
 */
export const makeAgent = (options: {
  readonly hooks: ReadonlyArray<Hook.Hook<ActivityStore.ActivityStore>>
  readonly script: ScriptedModel.Script
  readonly store: ActivityStore.ActivityStore.Service
  readonly approval?: Approval.ApprovalPolicy["Type"] | undefined
}) =>
  Effect.gen(function*() {
    const layer = Agent.layerTest({
      script: options.script,
      tools: [work],
      hooks: options.hooks,
      approval: options.approval
    }).pipe(
      Layer.provide(Layer.succeed(ActivityStore.ActivityStore, options.store))
    )
    // These layers hold no resources, so the built context outlives the scope.
    const context = yield* Effect.scoped(Layer.build(layer))
    return {
      pipeline: Context.get(context, Pipeline.Pipeline),
      test: Context.get(context, Agent.TestAgent)
    } satisfies ActivityAgent
  })

/** The activity hooks with test-friendly defaults (ttl 30 s, renewal every 10 s). */
export const activityHooks = (options: Partial<Activity.Options> = {}) =>
  Effect.orDie(Activity.make({ agent: "bot-a", ttl: "30 seconds", renewEvery: "10 seconds", ...options }))

/** A fresh in-memory ActivityStore service. */
export const memoryStore: Effect.Effect<ActivityStore.ActivityStore.Service> = Effect.provide(
  ActivityStore.make,
  ActivityStore.layerStoreMemory
)
