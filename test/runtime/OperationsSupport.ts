/**
 * Shared helpers for the operation-hook tests (seed 002, seed 003): a tool
 * that blocks until interrupted, an agent whose hooks need the retriever and
 * the memory store, a hook that probes what an operation returns inside a
 * request, observers that log what they see, and record readers.
 */
import { Tool } from "@effect/ai"
import { Context, Deferred, Effect, type Either, Layer, Schema, type Scope } from "effect"
import {
  Agent,
  type AgentResponse,
  type ExecutionRecord,
  Hook,
  MemoryStore,
  type Operation,
  Pipeline,
  PromptBuilder,
  Retriever,
  type ScriptedModel,
  ToolRegistry
} from "effect-agent-pipeline"
import { allTools, NAMESPACE } from "../../examples/shared/DemoTools.js"

// ---------------------------------------------------------------------------
// A tool that blocks until interrupted
// ---------------------------------------------------------------------------

export const BlockForever = Tool.make("block_forever", {
  description: "Never returns",
  parameters: { label: Schema.String },
  success: Schema.String
})

export const blockingStep = (stepId: string) => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "blocking-service",
  capability: "block_forever",
  parameters: { label: stepId }
})

/** Signals `started` with its label, then never returns. */
export const blockingTool = (started: Deferred.Deferred<string>): ToolRegistry.ToolEntry<never> =>
  ToolRegistry.entry({
    namespace: NAMESPACE,
    agent: "blocking-service",
    tool: BlockForever,
    handler: ({ label }) => Effect.zipRight(Deferred.succeed(started, label), Effect.never)
  })

// ---------------------------------------------------------------------------
// Hooks as a JavaScript caller could write them
// ---------------------------------------------------------------------------

/** A hook as a JavaScript caller could write it: the types are not checked. */
export const untyped = (hook: object): Hook.Hook<never> => hook as Hook.Hook<never>

// ---------------------------------------------------------------------------
// Observers that log
// ---------------------------------------------------------------------------

/** What an observer saw of one run: the call at its start, the result at its end. */
export interface Seen {
  readonly observer: string
  readonly call: Operation.Call
  result?: Operation.Result
}

/**
 * An Around observer that appends every run it sees to `seen` (and
 * `begin:<name>` / `end:<name>:<outcome>` lines to `log`, when given).
 */
export const observerOf = (name: string, seen: Array<Seen>, log?: Array<string>) => (call: Operation.Call) =>
  Effect.sync(() => {
    const entry: Seen = { observer: name, call }
    seen.push(entry)
    log?.push(`begin:${name}:${call.operation}`)
    return (result: Operation.Result) =>
      Effect.sync(() => {
        entry.result = result
        log?.push(`end:${name}:${call.operation}:${result.outcome}`)
      })
  })

/** The runs of one operation `seen` holds, in start order. */
export const runsOf = <Op extends Operation.Operation>(
  seen: ReadonlyArray<Seen>,
  operation: Op
): ReadonlyArray<Seen & { readonly call: Operation.Call<Op> }> =>
  seen.filter((s): s is Seen & { readonly call: Operation.Call<Op> } => s.call.operation === operation)

/** A reference to a run, as a child's `parent` names it. */
export const refOf = (call: Operation.Call): Operation.CallRef => ({ operation: call.operation, callId: call.callId })

// ---------------------------------------------------------------------------
// Results and records
// ---------------------------------------------------------------------------

export const completed = (result: AgentResponse.PipelineResult): AgentResponse.AgentResponse => {
  if (result._tag !== "Completed") throw new Error(`expected Completed, got ${result._tag}`)
  return result.response
}

/** The record's hook runs at one point. */
export const at = (record: ExecutionRecord.ExecutionRecord, stage: ExecutionRecord.HookInvocation["stage"]) =>
  record.hookInvocations.filter((i) => i.stage === stage)

/** The step results rendered in a prompt's `<step_results>` section. */
export const stepResultsIn = (prompt: string): ReadonlyArray<ExecutionRecord.StepResult> | undefined => {
  const section = PromptBuilder.readSection(prompt, "step_results")
  if (section === undefined) return undefined
  return section.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as ExecutionRecord.StepResult)
}

export const planPrompts = (prompts: ReadonlyArray<ScriptedModel.RecordedPrompt>) =>
  prompts.filter((p) => p.kind === "plan").map((p) => p.prompt)
export const textPrompts = (prompts: ReadonlyArray<ScriptedModel.RecordedPrompt>) =>
  prompts.filter((p) => p.kind !== "plan").map((p) => p.prompt)

// ---------------------------------------------------------------------------
// An agent whose hooks need the retrieval and memory seams
// ---------------------------------------------------------------------------

export const DOCUMENTS: ReadonlyArray<Operation.Document> = [
  { id: "d1", content: "ACME reports quarterly results on Friday" },
  { id: "d2", content: "ACME dividend policy is unchanged" },
  { id: "d3", content: "The weather in Lisbon is mild in spring" },
  { id: "d4", content: "Internal: ACME secret merger notes" }
]

export type SeamServices = Retriever.Retriever | MemoryStore.MemoryStore

export interface SeamAgent {
  readonly pipeline: Pipeline.Pipeline.Service
  readonly test: Agent.TestAgent.Service
  /** The memory store the hooks use (read it directly to see what was stored). */
  readonly memory: MemoryStore.MemoryStore.Service
}

/** A BeforePlanning hook (named `app`) that runs `effect` and keeps how it ended. */
export const probe = <A>(
  effect: Effect.Effect<A, unknown, SeamServices>,
  outcomes: Array<Either.Either<A, unknown>>
): Hook.Hook<SeamServices> =>
  Hook.make<SeamServices>({
    name: "app",
    beforePlanning: () => Effect.map(Effect.either(effect), (outcome) => void outcomes.push(outcome))
  })

/**
 * An agent built with `Agent.layerTest` whose hooks may need the `Retriever`
 * (over `documents`) and the `MemoryStore` (a fresh in-memory one, returned
 * so the test can read what was stored).
 */
export const makeSeamAgent = (options: {
  readonly hooks: ReadonlyArray<Hook.Hook<SeamServices>>
  readonly script?: ScriptedModel.Script | undefined
  readonly documents?: ReadonlyArray<Operation.Document> | undefined
}): Effect.Effect<SeamAgent, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const memory = yield* MemoryStore.makeMemory
    const seams = Layer.merge(
      Retriever.layerMemory(options.documents ?? DOCUMENTS),
      Layer.succeed(MemoryStore.MemoryStore, memory)
    )
    const layer = Agent.layerTest({
      script: options.script ?? { plans: [{ steps: [], terminal: true }], synthesis: "draft answer" },
      tools: allTools,
      hooks: options.hooks
    }).pipe(Layer.provide(seams))
    const context = yield* Layer.build(layer)
    return {
      pipeline: Context.get(context, Pipeline.Pipeline),
      test: Context.get(context, Agent.TestAgent),
      memory
    }
  })
