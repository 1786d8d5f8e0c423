/**
 * `npm run example:memory`: an offline agent with the built-in memory hooks
 * (`MemoryHooks.build`) on the SQLite file `./data/memory-agent.db` — its
 * own file, so the memory it shows is this example's alone (`npm run viewer
 * -- --store ./data/memory-agent.db` shows its records).
 *
 * It asks two things. The first needs a tool (the weather in Lisbon): the
 * recorder files the step as an episodic event. The follow-up names no tool
 * the offline planner can match, so no step runs; the enrichment showed the
 * event in the planning prompt's `<agent_memory>` section, and the offline
 * model answers by quoting it. Each request's memory evidence — the effects
 * of `memory-enrichment` and `memory-record` — is printed after its answer.
 * Memory grows from run to run (one event per run): a second run starts
 * with what the first one recorded, in an earlier process.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import {
  Agent,
  EpisodicMemory,
  type ExecutionRecord,
  ExecutionStore,
  Json,
  MemoryHooks,
  OfflineModel,
  Pipeline
} from "effect-agent-pipeline"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import { weatherForecast } from "../shared/DemoTools.js"

const domain = "travel"

// One SQLite client for the records and the memory (a Layer is built once per reference).
const StoresLive = Sqlite.layer({ filename: "./data/memory-agent.db" })

const AgentLive = Agent.layer({
  model: OfflineModel.layer,
  tools: [weatherForecast],
  // The heuristic summarizer: no model call to record an event.
  hooks: Effect.map(MemoryHooks.build({ domain, summarizer: "heuristic" }), (memory) => memory.hooks),
  executionStore: StoresLive,
  checkpointStore: StoresLive
}).pipe(Layer.provideMerge(StoresLive))

/** A field of an effect's data, by path (`undefined` when absent). */
const at = (data: Json.Json | undefined, ...path: ReadonlyArray<string>): Json.Json | undefined =>
  path.reduce<Json.Json | undefined>(
    (value, key) => (Json.isJsonObject(value) ? value[key] : undefined),
    data
  )

/** One line per memory effect: what its data says, in brief (the viewer shows all of it). */
const describe = (effect: ExecutionRecord.HookEffect): string => {
  const data = effect.data
  switch (effect.effectId) {
    case MemoryHooks.episodicReadEffectId:
      return `${at(data, "status")}, ${at(data, "returned_events")} recent event(s)`
    case MemoryHooks.digestWindowEffectId:
      return `digest entry found: ${at(data, "cache_entry_found")}, coverage: ${at(data, "coverage")}`
    case MemoryHooks.planningContextEffectId:
      return `entities ${JSON.stringify(at(data, "entities"))}, sections ${
        JSON.stringify(at(data, "view", "sections"))
      }`
    case MemoryHooks.recordsEffectId: {
      const events = at(data, "events")
      const ids = Array.isArray(events) ? events.map((e) => at(e, "event_id")) : []
      return `${at(data, "submitted")} of ${at(data, "steps")} step(s) filed ${JSON.stringify(ids)}`
    }
    default: // planning_enrichment:rag_context: the view the planning prompt got
      return `shown as <agent_memory>:\n      ${String(at(data, "after")).replace(/\n/g, "\n      ")}`
  }
}

const ask = (request: string, requestId: string) =>
  Effect.gen(function*() {
    const pipeline = yield* Pipeline.Pipeline
    yield* Console.log(`\n▶ ${request}`)
    const result = yield* pipeline.process({ request, requestId })
    if (result._tag === "Completed") {
      yield* Console.log(`  answer: ${result.response.response.replace(/\n/g, "\n    ")}`)
    }
    const record = yield* Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.get(requestId))
    const runs = Option.match(record, { onNone: () => [], onSome: (r) => r.hookInvocations })
    for (const run of runs.filter((r) => r.name === "memory-enrichment" || r.name === "memory-record")) {
      for (const effect of run.effects) {
        yield* Console.log(`  ${run.name} · ${effect.effectId} (${effect.status}): ${describe(effect)}`)
      }
    }
  })

const main = Effect.gen(function*() {
  const before = yield* EpisodicMemory.recent({ scope: domain, since: 0, limit: 100 })
  yield* Console.log(`Memory of domain "${domain}" holds ${before.length} event(s) from earlier runs.`)
  // Request ids are unique per run: a stored record keeps its id.
  const run = new Date().toISOString().replace(/[-:.TZ]/g, "").slice(0, 17)
  yield* ask("What's the weather forecast in Lisbon?", `memory-${run}-1`)
  yield* ask("Remind me what you found out about Lisbon.", `memory-${run}-2`)
}).pipe(Effect.provide(AgentLive))

NodeRuntime.runMain(main)
