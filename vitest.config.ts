import { fileURLToPath } from "node:url"
import { configDefaults, defineConfig } from "vitest/config"

const src = (file: string) => fileURLToPath(new URL(file, import.meta.url))

export default defineConfig({
  resolve: {
    // The package's entry points, as a user imports them (subpaths first).
    alias: [
      { find: /^effect-agent-pipeline\/sqlite$/, replacement: src("./src/stores/sql/Sqlite.ts") },
      { find: /^effect-agent-pipeline\/postgres$/, replacement: src("./src/stores/sql/Postgres.ts") },
      { find: /^effect-agent-pipeline\/redis$/, replacement: src("./src/stores/redis/ActivityStoreRedis.ts") },
      { find: /^effect-agent-pipeline\/otel$/, replacement: src("./src/runtime/otel/Telemetry.ts") },
      { find: /^effect-agent-pipeline\/openai$/, replacement: src("./src/ai/providers/OpenAi.ts") },
      { find: /^effect-agent-pipeline\/anthropic$/, replacement: src("./src/ai/providers/Anthropic.ts") },
      { find: /^effect-agent-pipeline$/, replacement: src("./src/index.ts") }
    ]
  },
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    // The package test packs and installs with npm: `npm run test:package`.
    exclude: [...configDefaults.exclude, "test/package/**"],
    testTimeout: 30_000
  }
})
