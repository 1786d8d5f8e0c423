/**
 * Shared by the user memory and conversation history hook tests: the
 * vector store backends they run on (memory, a SQLite temp file), fake
 * extraction models (scripted, gated on a Deferred), a request context for
 * direct calls, and an agent over the scripted model with given hooks.
 */
import { AiError, LanguageModel, type Response } from "@effect/ai"
import { Context, Deferred, Effect, Layer, Schema, type Scope, Stream } from "effect"
import { Agent, type ExecutionRecord, type Hook, Pipeline, PipelineContext, ScriptedModel } from "effect-agent-pipeline"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import { layerMemory, VectorStore } from "../../src/stores/VectorStore.js"

/** A backend the hook tests run on: a fresh, empty vector store per build. */
export interface Backend {
  readonly name: string
  readonly layer: () => Layer.Layer<VectorStore>
}

export const backends: ReadonlyArray<Backend> = [
  { name: "memory", layer: () => Layer.orDie(layerMemory()) },
  {
    name: "sqlite",
    layer: () =>
      Layer.unwrapScoped(
        Effect.map(
          Effect.acquireRelease(
            Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eap-user-memory-"))),
            (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
          ),
          (dir) => Layer.orDie(Sqlite.layerVectorStore({ filename: path.join(dir, "memory.db") }))
        )
      )
  }
]

const finish: Response.PartEncoded = {
  type: "finish",
  reason: "stop",
  usage: { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }
}

/** An extraction model that answers every prompt with `reply`, and the prompts it got. */
export const extractor = (reply: string | ((prompt: string) => string)) =>
  ScriptedModel.make({ plans: [], synthesis: reply })

/** A model that waits for `gate` before it answers `reply`. */
export const gatedModel = (gate: Deferred.Deferred<void>, reply: string) =>
  LanguageModel.make({
    generateText: () => Effect.as(Deferred.await(gate), [{ type: "text", text: reply }, finish]),
    streamText: () => Stream.empty
  })

/** A model whose every call fails. */
export const failingModel = LanguageModel.make({
  generateText: () =>
    Effect.fail(new AiError.UnknownError({ module: "test", method: "generateText", description: "provider down" })),
  streamText: () => Stream.empty
})

/** A request context for calling a handler directly. */
export const contextFor = (
  requestId: string,
  request: string,
  metadata: Record<string, string> = {}
): PipelineContext.PipelineContext => ({
  requestId: Schema.decodeSync(PipelineContext.RequestId)(requestId),
  request,
  metadata,
  enrichments: {}
})

export interface TestAgent {
  readonly pipeline: Pipeline.Pipeline.Service
  readonly test: Agent.TestAgent.Service
}

/** An agent over the scripted model (empty plans, `synthesis` as the answer) with `hooks`. */
export const makeAgent = (
  hooks: ReadonlyArray<Hook.Hook>,
  synthesis = "Here you go."
): Effect.Effect<TestAgent, never, Scope.Scope> =>
  Effect.gen(function*() {
    const layer = Agent.layerTest({
      script: { plans: Array.from({ length: 20 }, () => ({ steps: [], terminal: true })), synthesis },
      tools: [],
      hooks
    })
    const context = yield* Layer.build(Layer.orDie(layer))
    return { pipeline: Context.get(context, Pipeline.Pipeline), test: Context.get(context, Agent.TestAgent) }
  })

/** The planning prompts the agent's model received, in order. */
export const planPrompts = (agent: TestAgent) =>
  agent.test.prompts.filter((p) => p.kind === "plan").map((p) => p.prompt)

/** The effects one hook reported in a record, by effect id. */
export const effectsOf = (record: ExecutionRecord.ExecutionRecord, hook: string) =>
  Object.fromEntries(
    record.hookInvocations.filter((i) => i.name === hook).flatMap((i) => i.effects.map((e) => [e.effectId, e]))
  )

/** The `<user_profile>` block of a prompt, or undefined. */
export const profileBlock = (prompt: string): string | undefined =>
  /<user_profile>\n[\s\S]*?\n<\/user_profile>/.exec(prompt)?.[0]
