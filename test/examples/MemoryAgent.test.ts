/**
 * `npm run example:memory` as a user runs it (issue 22 "Done when"): the
 * program runs twice under Node with tsx in a fresh folder (its own
 * `./data/memory-agent.db`), offline. Each run asks for the weather in
 * Lisbon (a tool call the memory recorder files) and then a follow-up no
 * tool serves, which the offline model answers from the memory the
 * enrichment showed it. The records are read back from the SQLite file.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ExecutionRecord, ExecutionStore, MemoryHooks } from "effect-agent-pipeline"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm")).href

const followUp = "Remind me what you found out about Lisbon."

/** The example's program, run in `cwd`; what it printed. */
const runExample = (cwd: string): Effect.Effect<string> =>
  Effect.promise(() =>
    new Promise<string>((resolve, reject) => {
      // The store and model settings come from the program's defaults, not from the environment.
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) =>
          !/^(AGENT_|SQLITE_PATH$|DATABASE_URL$|ACTIVITY_STORE$|OTEL_|OPENAI_|ANTHROPIC_)/.test(name)
        )
      )
      const child = spawn(process.execPath, ["--import", tsx, join(root, "examples/memory-agent/main.ts")], {
        cwd,
        env: { ...env, TSX_TSCONFIG_PATH: join(root, "tsconfig.json") },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let out = ""
      let err = ""
      child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")))
      child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")))
      child.on(
        "exit",
        (code) => (code === 0 ? resolve(out) : reject(new Error(`the example failed (${code}): ${err}`)))
      )
    })
  )

/** The records in `cwd/data/memory-agent.db`, newest first. */
const recordsIn = (cwd: string) =>
  Effect.flatMap(ExecutionStore.ExecutionStore, (store) => store.list({ limit: 20 })).pipe(
    Effect.map((page) => page.records),
    Effect.provide(Layer.orDie(Sqlite.layer({ filename: join(cwd, "data", "memory-agent.db") })))
  )

const effectOf = (record: ExecutionRecord.ExecutionRecord, hook: string, effectId: string) =>
  record.hookInvocations.find((run) => run.name === hook)?.effects.find((e) => e.effectId === effectId)

/** The answer lines a run printed for `request`, up to the evidence. */
const answerTo = (output: string, request: string): string => {
  const block = output.split(`▶ ${request}\n`)[1] ?? ""
  return block.split("\n  memory-")[0] ?? ""
}

describe("the memory example agent (npm run example:memory)", () => {
  it.scopedLive(
    "answers the follow-up from what the first request recorded; a second run still does",
    () =>
      Effect.gen(function*() {
        const folder = mkdtempSync(join(tmpdir(), "eap-memory-example-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(folder, { recursive: true, force: true })))

        const first = yield* runExample(folder)
        expect(first).toContain("Memory of domain \"travel\" holds 0 event(s) from earlier runs.")
        const firstRecords = yield* recordsIn(folder)
        expect(firstRecords.map((r) => r.request)).toEqual([followUp, "What's the weather forecast in Lisbon?"])
        const [followUpRecord, weatherRecord] = firstRecords

        // The fact: what the tool returned in the first request.
        const step = weatherRecord!.phases.flatMap((p) => p.steps)[0]
        expect(step?.capability).toBe("weather_forecast")
        expect(step?.status).toBe("succeeded")
        const fact = JSON.stringify(step!.output)
        const recorded = effectOf(weatherRecord!, "memory-record", MemoryHooks.recordsEffectId)
        expect(recorded?.status).toBe("succeeded")
        expect(recorded?.data).toMatchObject({ steps: 1, submitted: 1 })

        // The follow-up ran no tool and was answered from memory, quoting the fact.
        expect(followUpRecord!.phases.flatMap((p) => p.steps)).toEqual([])
        const answer = followUpRecord!.finalResponse ?? ""
        expect(answer).toContain("From earlier requests")
        expect(answer).toContain(fact)
        expect(answerTo(first, followUp)).toContain(fact)
        const context = effectOf(followUpRecord!, "memory-enrichment", MemoryHooks.planningContextEffectId)
        expect(context?.status).toBe("succeeded")
        expect(context?.data).toMatchObject({
          domain: "travel",
          view: { sections: { recent: 1 }, outcome: "rendered" }
        })
        // The evidence is printed too.
        expect(first).toContain(`memory-enrichment · ${MemoryHooks.planningContextEffectId} (succeeded)`)
        expect(first).toContain(`memory-record · ${MemoryHooks.recordsEffectId} (succeeded): 1 of 1 step(s) filed`)

        // A second process starts with the first one's memory, and answers the same way.
        const second = yield* runExample(folder)
        expect(second).toContain("Memory of domain \"travel\" holds 1 event(s) from earlier runs.")
        expect(answerTo(second, followUp)).toContain(fact)
        // The weather answer now also quotes the earlier run.
        expect(answerTo(second, "What's the weather forecast in Lisbon?")).toContain("From earlier requests")
        const latest = (yield* recordsIn(folder))[0]!
        expect(latest.request).toBe(followUp)
        const grown = effectOf(latest, "memory-enrichment", MemoryHooks.planningContextEffectId)
        expect(grown?.data).toMatchObject({ view: { sections: { recent: 2 } } })
        // The same event from two runs is quoted once.
        expect((latest.finalResponse ?? "").split(fact).length - 1).toBe(1)
      }),
    120_000
  )
})
