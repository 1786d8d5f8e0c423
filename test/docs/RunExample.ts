/**
 * Runs a documentation example in-process, against `src/`. A program ends
 * with `NodeRuntime.runMain(main)`; the test files that use this module mock
 * `@effect/platform-node` so that `runMain` hands `main` to them instead of
 * running it (see `mockRunMain`), and they run it here with `Console.log`
 * captured and a configuration of their choosing.
 */
import { ConfigProvider, Console, Effect } from "effect"

/** What the mocked `NodeRuntime.runMain` received, in order. */
export type Captured = Array<Effect.Effect<unknown, unknown>>

/**
 * The factory for `vi.mock("@effect/platform-node", …)`: the real module, with
 * a `NodeRuntime.runMain` that pushes its effect onto `captured`.
 */
export const mockRunMain = (captured: Captured) => async (importOriginal: () => Promise<unknown>) => {
  const original = (await importOriginal()) as typeof import("@effect/platform-node")
  return {
    ...original,
    NodeRuntime: {
      ...original.NodeRuntime,
      runMain: (effect: Effect.Effect<unknown, unknown>) => void captured.push(effect)
    }
  }
}

export interface Loaded {
  readonly module: Record<string, unknown>
  /** The effect the file gave `NodeRuntime.runMain`. */
  readonly main: Effect.Effect<unknown, unknown>
}

const loaded = new Map<string, Promise<Loaded>>()

/**
 * Imports an example program (`hooks.ts`) and returns the effect it would
 * run. A module is evaluated once: a second `load` of the same file returns
 * what the first one got.
 */
export const load = (captured: Captured, file: string): Effect.Effect<Loaded> =>
  Effect.promise(() => {
    const known = loaded.get(file)
    if (known !== undefined) return known
    const loading = (async () => {
      const before = captured.length
      // The literal folder and extension let Vite resolve the import.
      const module = (await import(`../../examples/readme/${file.replace(/\.ts$/, "")}.ts`)) as Record<
        string,
        unknown
      >
      const main = captured[before]
      if (main === undefined || captured.length !== before + 1) {
        throw new Error(`${file} did not call NodeRuntime.runMain exactly once on import`)
      }
      return { module, main }
    })()
    loaded.set(file, loading)
    return loading
  })

/** Runs `effect` with `Console.log` captured; returns what it printed, one string. */
export const printed = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<string, E, R> =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const base = yield* Effect.console
    yield* Console.withConsole(effect, {
      ...base,
      log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void lines.push(args.map(String).join(" ")))
    })
    return lines.join("\n")
  })

/** Runs `effect` with exactly this configuration (no environment variable of the caller's). */
export const withConfig = (values: Readonly<Record<string, string>>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.withConfigProvider(effect, ConfigProvider.fromMap(new Map(Object.entries(values))))
