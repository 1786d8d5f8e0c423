import { fileURLToPath } from "node:url"
import { configDefaults, defineConfig } from "vitest/config"

export default defineConfig({
  resolve: {
    alias: { "effect-agent-pipeline": fileURLToPath(new URL("./src/index.ts", import.meta.url)) }
  },
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    // The package test packs and installs with npm: `npm run test:package`.
    exclude: [...configDefaults.exclude, "test/package/**"],
    testTimeout: 30_000
  }
})
