/**
 * `Progress` (issue 23, seed 004 "Progress Tracking"): a request's progress
 * as a `Stream` of typed events with human-readable messages — followed
 * live from the recorder of a request running in this process (a slow
 * tool's start arrives while the tool runs), hook runs included, ending at
 * the record's finalize; replayed for a finished request; polled from a
 * second SQLite client for a request another OS process runs; and nothing
 * done for a request nobody follows.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Duration, Effect, Fiber, Layer, Option, Queue, Stream } from "effect"
import { type ExecutionRecord, ExecutionStore, Hook, Pipeline } from "effect-agent-pipeline"
import * as Sqlite from "effect-agent-pipeline/sqlite"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Registry from "../../src/runtime/internal/progressRegistry.js"
import * as RequestRecorder from "../../src/runtime/internal/requestRecorder.js"
import * as Progress from "../../src/runtime/Progress.js"
import { agentLayer, quoteStep } from "../server/support/StreamServer.js"
import { start as startProcess } from "../support/processes/ChildProcess.js"

type Event = Progress.ProgressEvent

const label = (e: Event): string =>
  e._tag === "HookStarted" || e._tag === "HookEnded" ?
    `${e._tag}:${e.hookName}` :
    e._tag === "PhaseStarted" ?
    `${e._tag}:${e.phase}` :
    `${e._tag}:${e.stepId}`

/** Every end follows its start: tools by phase and step, hook runs by invocation. */
const complete = (events: ReadonlyArray<Event>): boolean => {
  const started = new Set<string>()
  for (const e of events) {
    const key = e._tag === "ToolStarted" || e._tag === "ToolEnded" ?
      `tool:${e.phase}:${e.stepId}` :
      e._tag === "HookStarted" || e._tag === "HookEnded"
      ? `hook:${e.invocation}`
      : undefined
    if (key === undefined) continue
    if (e._tag === "ToolStarted" || e._tag === "HookStarted") started.add(key)
    else if (!started.has(key)) return false
  }
  return true
}

const agent = (hold: Effect.Effect<void>) =>
  agentLayer({
    script: { plan: () => ({ steps: [quoteStep("q1")], terminal: true }), tokens: () => ["ok"] },
    hold: () => hold,
    hooks: [Hook.make({ name: "note", beforePlanning: () => Effect.void })]
  })

describe("Progress: live in-process", () => {
  it.live("seed 004: tool start arrives while the tool runs, hook runs appear, the stream ends at finalize", () =>
    Effect.gen(function*() {
      const held = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const services = yield* Layer.build(
        agent(Effect.zipRight(Deferred.succeed(held, undefined), Deferred.await(release)))
      )
      const pipeline = yield* Effect.provide(Pipeline.Pipeline, services)
      const store = yield* Effect.provide(ExecutionStore.ExecutionStore, services)
      const seen = yield* Queue.unbounded<Event>()
      // Opened before the request starts, without a store: only the live recorder can feed it.
      const following = yield* Progress.events("pg-live").pipe(
        Stream.tap((e) => Queue.offer(seen, e)),
        Stream.runCollect,
        Effect.fork
      )
      const request = yield* Effect.fork(pipeline.process({ request: "quote", requestId: "pg-live" }))
      const early: Array<Event> = []
      while (early.at(-1)?._tag !== "ToolStarted") early.push(yield* Queue.take(seen))
      // The tool is still held: its start came live, not from a write at the end.
      expect(yield* Deferred.isDone(held)).toBe(true)
      expect(yield* Deferred.isDone(release)).toBe(false)
      expect(early.map(label)).toEqual(["HookStarted:note", "HookEnded:note", "PhaseStarted:1", "ToolStarted:q1"])
      expect(early[3]).toMatchObject({
        _tag: "ToolStarted",
        phase: 1,
        stepId: "q1",
        capability: "quote",
        message: "Running tool quote (step q1)"
      })
      expect(early[1]).toMatchObject({ _tag: "HookEnded", stage: "before_planning", status: "completed" })
      expect(early[1]!.message).toMatch(/^Hook note completed in \d+ ms \(before_planning\)$/)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(request)
      // Ends by itself once the record is finalized.
      const all = Chunk.toReadonlyArray(yield* Fiber.join(following).pipe(Effect.timeout("5 seconds")))
      expect(all.slice(0, 4)).toEqual(early)
      const labels = all.map(label)
      expect(labels.indexOf("ToolEnded:q1")).toBeGreaterThan(labels.indexOf("ToolStarted:q1"))
      expect(all.find((e) => e._tag === "ToolEnded")).toMatchObject({ status: "succeeded" })
      expect(all.find((e) => e._tag === "ToolEnded")?.message).toMatch(/^Tool quote succeeded in \d+ ms \(step q1\)$/)
      expect(complete(all)).toBe(true)
      expect(labels.filter((l) => l === "ToolStarted:q1")).toHaveLength(1)
      expect(Option.getOrThrow(yield* store.get("pg-live")).lifecycle?.status).toBe("succeeded")
      // No recorder is left registered once its record is finalized.
      expect(Registry.lookup("pg-live")).toBeUndefined()
    }).pipe(Effect.scoped))

  it.live("a finished request: its events replayed from the store, then the end", () =>
    Effect.gen(function*() {
      const services = yield* Layer.build(agent(Effect.void))
      const pipeline = yield* Effect.provide(Pipeline.Pipeline, services)
      const store = yield* Effect.provide(ExecutionStore.ExecutionStore, services)
      yield* pipeline.process({ request: "quote", requestId: "pg-done" })
      const events = Chunk.toReadonlyArray(
        yield* Stream.runCollect(Progress.events("pg-done", { store })).pipe(Effect.timeout("5 seconds"))
      )
      const record = Option.getOrThrow(yield* store.get("pg-done"))
      expect(events).toEqual(Progress.between(undefined, record))
      expect(events.map(label).slice(0, 4)).toEqual([
        "HookStarted:note",
        "HookEnded:note",
        "PhaseStarted:1",
        "ToolStarted:q1"
      ])
      expect(complete(events)).toBe(true)
    }).pipe(Effect.scoped))
})

describe("Progress: nobody listening", () => {
  const initial = {
    schemaVersion: 1,
    requestId: "pg-quiet",
    recordRevision: 0,
    mode: "pipeline",
    request: "q",
    metadata: {},
    lifecycle: { status: "running", startedAt: 0 },
    phases: [],
    hookInvocations: [],
    diagnostics: []
  } as const

  it.effect("a recorder calls its listeners once per change, and nothing once nobody listens", () =>
    Effect.gen(function*() {
      const recorder = RequestRecorder.make(() => Effect.void, initial)
      const live = Registry.lookup("pg-quiet")
      expect(live).toBe(recorder)
      let calls = 0
      const stop = live!.listen(() => void calls++)
      yield* recorder.modify((r) => ({ ...r, request: "q2" }))
      yield* recorder.modify((r) => ({ ...r, request: "q3" }))
      expect(calls).toBe(2)
      stop()
      yield* recorder.modify((r) => ({ ...r, request: "q4" }))
      expect(calls).toBe(2)
      yield* recorder.finalize({ status: "succeeded", startedAt: 0, endedAt: 1 })
      expect(Registry.lookup("pg-quiet")).toBeUndefined()
    }))

  it.live("requests nobody follows leave nothing registered and no listener behind", () =>
    Effect.gen(function*() {
      const services = yield* Layer.build(agent(Effect.void))
      const pipeline = yield* Effect.provide(Pipeline.Pipeline, services)
      const before = Registry.size()
      yield* Effect.forEach(
        ["pg-q1", "pg-q2", "pg-q3"],
        (requestId) => pipeline.process({ request: "quote", requestId })
      )
      expect(Registry.size()).toBe(before)
    }).pipe(Effect.scoped))
})

describe("Progress: a request another process runs", () => {
  it.live(
    "polled from a second SQLite client: the hook, the phase and the tool in flight, then the end once the record is final",
    () =>
      Effect.gen(function*() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-progress-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
        const filename = path.join(dir, "agent.db")
        const child = startProcess("./agentProcess.ts", [
          JSON.stringify({ action: "hang", store: { sqlite: filename }, requestId: "pg-other" })
        ])
        yield* Effect.addFinalizer(() => Effect.sync(() => child.child.kill("SIGKILL")))
        const store = yield* Effect.provide(
          ExecutionStore.ExecutionStore,
          yield* Layer.build(Sqlite.layerExecutionStore({ filename }))
        )
        const seen = yield* Queue.unbounded<Event>()
        const following = yield* Progress.events("pg-other", { store, pollInterval: "50 millis" }).pipe(
          Stream.tap((e) => Queue.offer(seen, e)),
          Stream.runCollect,
          Effect.fork
        )
        yield* Effect.promise(() => child.next("tool-started", 30_000))
        const early: Array<Event> = []
        while (early.at(-1)?._tag !== "ToolStarted") {
          early.push(yield* Queue.take(seen).pipe(Effect.timeout("10 seconds")))
        }
        // Not live here: nothing of that request records in this process.
        expect(Registry.lookup("pg-other")).toBeUndefined()
        expect(early.map(label)).toEqual(["HookStarted:audit", "HookEnded:audit", "PhaseStarted:1", "ToolStarted:w1"])
        // The other process dies; once its lease ran out, the record is marked abandoned (final).
        child.child.kill("SIGKILL")
        yield* Effect.promise(() => child.exited)
        const running = Option.getOrThrow(yield* store.get("pg-other"))
        const leaseEnd = running.lifecycle?.leaseExpiresAt ?? 0
        yield* Effect.sleep(Duration.millis(Math.max(0, leaseEnd - Date.now()) + 100))
        expect(yield* store.sweepAbandoned).toBe(1)
        const all = Chunk.toReadonlyArray(yield* Fiber.join(following).pipe(Effect.timeout("10 seconds")))
        expect(all).toEqual(early)
      }).pipe(Effect.scoped),
    60_000
  )
})

describe("Progress.between: hook runs", () => {
  const record = (revision: number, hookInvocations: ReadonlyArray<ExecutionRecord.HookInvocation>) => ({
    schemaVersion: 1,
    requestId: "pg-pure",
    recordRevision: revision,
    mode: "pipeline" as const,
    request: "q",
    metadata: {},
    lifecycle: { status: "running" as const, startedAt: 0 },
    phases: [],
    hookInvocations,
    diagnostics: []
  })
  const run = (status: ExecutionRecord.HookRunStatus, parts: Partial<ExecutionRecord.HookInvocation> = {}) => ({
    name: "audit",
    stage: "after_synthesis" as const,
    outcome: status === "completed"
      ? "succeeded" as const
      : status === "backgrounded"
      ? "pending" as const
      : "failed" as const,
    status,
    sequence: 0,
    startedAt: 10,
    duration: 4,
    runId: "w/1",
    effects: [],
    ...parts
  })

  it("a run seen ended at once starts and ends together; a backgrounded one ends later, once", () => {
    const decision = { policy: "fail_closed", action: "deny", reason: "refused" } as const
    const first = record(1, [run("denied", { name: "guard", runId: "w/0", decision }), run("backgrounded")])
    expect(Progress.between(undefined, first)).toEqual([
      {
        _tag: "HookStarted",
        invocation: 0,
        hookName: "guard",
        stage: "after_synthesis",
        status: "started",
        message: "Hook guard started (after_synthesis)"
      },
      {
        _tag: "HookEnded",
        invocation: 0,
        hookName: "guard",
        stage: "after_synthesis",
        status: "denied",
        duration: 4,
        decision,
        message: "Hook guard denied in 4 ms (after_synthesis): deny (refused)"
      },
      {
        _tag: "HookStarted",
        invocation: 1,
        hookName: "audit",
        stage: "after_synthesis",
        status: "backgrounded",
        message: "Hook audit running in the background (after_synthesis)"
      }
    ])
    const later = record(2, [first.hookInvocations[0]!, run("completed", { duration: 30 })])
    expect(Progress.between(first, later)).toEqual([
      {
        _tag: "HookEnded",
        invocation: 1,
        hookName: "audit",
        stage: "after_synthesis",
        status: "completed",
        duration: 30,
        message: "Hook audit completed in 30 ms (after_synthesis)"
      }
    ])
    expect(Progress.between(later, record(3, later.hookInvocations))).toEqual([])
  })
})
