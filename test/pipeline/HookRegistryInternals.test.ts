/**
 * The registry's internals: the point → hook field table agrees with the
 * registration's reading of a hook (`handlersOf`) at every point, and a
 * replaced pipeline version stays open while a request still runs on it,
 * then closes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Scope } from "effect"
import * as ModelPolicy from "../../src/ai/ModelPolicy.js"
import * as OfflineModel from "../../src/ai/OfflineModel.js"
import * as ToolRegistry from "../../src/ai/ToolRegistry.js"
import { HookPoint } from "../../src/domain/HookPoint.js"
import type * as Hook from "../../src/pipeline/Hook.js"
import { handlersOf } from "../../src/pipeline/internal/hookRegistration.js"
import { fieldsOf, isPoint, type Point } from "../../src/pipeline/internal/hookRegistryPoints.js"
import * as Versions from "../../src/pipeline/internal/hookRegistryVersions.js"
import * as CheckpointStore from "../../src/stores/CheckpointStore.js"
import * as ExecutionStore from "../../src/stores/ExecutionStore.js"

// Every point the domain knows: a new point without a placement fails here (and at `isPoint`).
const points: ReadonlyArray<Point> = HookPoint.literals

describe("HookRegistry internals: where a handler lands", () => {
  it("registry: at every point, the handler is what the registration reads at that point, and only there", () => {
    expect(points.length).toBe(31)
    for (const point of points) {
      expect(isPoint(point)).toBe(true)
      const handler = () => Effect.void
      // Any handler object will do for where it lands; its type is checked at `register`.
      const hook: Hook.Hook = { name: "h", ...fieldsOf(point, handler as never) }
      const read = Object.entries(handlersOf(hook)).filter(([, h]) => h !== undefined)
      expect(read).toEqual([[point, handler]])
    }
  })

  it("registry: anything else is not a point (a JavaScript caller's string, an inherited key)", () => {
    for (const u of ["before_llm_call", "toString", "__proto__", "", 1, undefined]) expect(isPoint(u)).toBe(false)
  })
})

const base = Layer.mergeAll(
  OfflineModel.layer,
  ToolRegistry.layer<never>([]),
  ExecutionStore.layerMemory(),
  CheckpointStore.layerMemory
)

const options: Versions.BuildOptions = {
  runtimeOptions: {},
  policy: ModelPolicy.defaults,
  pipelineOptions: undefined,
  hookContext: Context.empty()
}

describe("HookRegistry internals: versions", () => {
  it.scoped("registry: a replaced version closes only once the request running on it ends", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const hold: Hook.Hook = {
        name: "hold",
        beforePlanning: () => Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release))
      }
      const versions = yield* Versions.make([hold], options)
      const closed = yield* Deferred.make<void>()
      const first = versions.current()
      yield* Scope.addFinalizer(first.scope, Deferred.succeed(closed, undefined))
      const request = yield* Effect.fork(versions.pipeline.process({ request: "weather in Paris" }))
      yield* Deferred.await(started)
      yield* versions.swap(yield* versions.build([]))
      expect(versions.current()).not.toBe(first)
      expect([first.retired, first.inFlight]).toEqual([true, 1])
      yield* Effect.yieldNow()
      expect(yield* Deferred.isDone(closed)).toBe(false)
      yield* Deferred.succeed(release, undefined)
      expect((yield* Fiber.join(request))._tag).toBe("Completed")
      yield* Deferred.await(closed)
      expect(first.inFlight).toBe(0)
    }).pipe(Effect.provide(base)))

  it.scoped("registry: a replaced version no request runs on closes at once; a build that fails changes nothing", () =>
    Effect.gen(function*() {
      const versions = yield* Versions.make([], options)
      const first = versions.current()
      const closed = yield* Deferred.make<void>()
      yield* Scope.addFinalizer(first.scope, Deferred.succeed(closed, undefined))
      yield* versions.swap(yield* versions.build([]))
      yield* Deferred.await(closed)
      const broken: Hook.Hook = { name: "x", afterExecution: () => Effect.void, dependsOn: ["nobody"] }
      const error = yield* Effect.flip(versions.build([broken]))
      expect(error._tag).toBe("InvalidHookSubscription")
      expect(versions.current().retired).toBe(false)
    }).pipe(Effect.provide(base)))
})
