import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import { semanticCacheFlow } from "./SemanticCacheSupport.js"

// A temporary file per test, removed after the store closes (the cleanup
// Layer is built first, so it is finalized last).
const sqliteFile = (vectorSearch: "extension" | "bruteForce") => () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-semantic-cache-"))
  return Sqlite.layerVectorStore({ filename: path.join(dir, "agent.db"), vectorSearch }).pipe(
    Layer.provideMerge(
      Layer.scopedDiscard(
        Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      )
    ),
    Layer.orDie
  )
}

semanticCacheFlow("SQLite (a temp file, sqlite-vec)", sqliteFile("extension"))
semanticCacheFlow("SQLite (a temp file, brute force)", sqliteFile("bruteForce"))
