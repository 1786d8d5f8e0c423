import { fileURLToPath } from "node:url"
import { configDefaults, defineConfig } from "vitest/config"
import { propertyRunsSetting } from "./test/support/PropertyRuns.js"

const src = (file: string) => fileURLToPath(new URL(file, import.meta.url))

/**
 * Test files that read process-wide state as their own (exact counts in
 * Effect's global metric registry): each runs in a fresh worker process,
 * not after other files in a shared one.
 */
const ownProcess = ["test/runtime/otel/Telemetry.test.ts"]

export default defineConfig({
  resolve: {
    // The package's entry points, as a user imports them (subpaths first).
    alias: [
      { find: /^effect-agent-pipeline\/sqlite$/, replacement: src("./src/stores/sql/Sqlite.ts") },
      { find: /^effect-agent-pipeline\/postgres$/, replacement: src("./src/stores/sql/Postgres.ts") },
      { find: /^effect-agent-pipeline\/redis$/, replacement: src("./src/stores/redis/ActivityStoreRedis.ts") },
      { find: /^effect-agent-pipeline\/otel$/, replacement: src("./src/runtime/otel/Telemetry.ts") },
      { find: /^effect-agent-pipeline\/openai$/, replacement: src("./src/ai/providers/OpenAi.ts") },
      { find: /^effect-agent-pipeline\/openai-compat$/, replacement: src("./src/ai/providers/OpenAiCompat.ts") },
      { find: /^effect-agent-pipeline\/anthropic$/, replacement: src("./src/ai/providers/Anthropic.ts") },
      { find: /^effect-agent-pipeline\/server$/, replacement: src("./src/server/AgentServer.ts") },
      { find: /^effect-agent-pipeline\/durable$/, replacement: src("./src/durable/DurablePipeline.ts") },
      { find: /^effect-agent-pipeline$/, replacement: src("./src/index.ts") }
    ]
  },
  test: {
    // Heavy properties at their CI size (`EAP_PROPERTY_RUNS=full`) take
    // longer: the PostgreSQL conformance properties 20–30 s apiece on a
    // loaded 2-core machine (see test/support/PropertyRuns.ts).
    testTimeout: propertyRunsSetting === "full" ? 120_000 : 30_000,
    // A turn of the event loop after every test (vitest 3 fails a run whose
    // worker left its RPC replies unread for 60 s).
    setupFiles: ["./test/support/YieldBetweenTests.ts"],
    // Speed on a 2-core machine (issue 18: `npm test` within 4 minutes).
    // Two workers, not vitest's default of cores − 1 (one): much of the suite
    // waits on PostgreSQL, Redis and child processes, not on the CPU. As many
    // kept as started: a worker retired for being idle between the two
    // projects below can take a test file down with it (tinypool).
    maxWorkers: 2,
    minWorkers: 2,
    // Test files share their worker's modules instead of each loading Effect
    // and src/ afresh in a new process (that loading was a third of the
    // suite's time): every test builds its services from layers, so it needs
    // no fresh module state — except the files in `ownProcess`.
    isolate: false,
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
          // The package test packs and installs with npm: `npm run test:package`.
          exclude: [...configDefaults.exclude, "test/package/**", ...ownProcess]
        }
      },
      { extends: true, test: { name: "own-process", include: ownProcess } }
    ]
  }
})
