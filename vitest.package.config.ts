import { defineConfig } from "vitest/config"

/**
 * The package test (`npm run test:package`): packs the library, installs the
 * tarball into a temp project and typechecks and runs there every example the
 * README and docs/ show. No alias for `effect-agent-pipeline`: the test must
 * use the installed package, not src/.
 */
export default defineConfig({
  test: {
    include: ["test/package/**/*.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 300_000
  }
})
