import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import { userFactsConformance } from "./UserFactsConformance.js"

/** A fresh SQLite file per build, deleted when the layer's scope closes. */
const sqliteFile = (vectorSearch: "auto" | "bruteForce") => () =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "eap-user-facts-"))),
        (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
      ),
      (dir) => Layer.orDie(Sqlite.layerVectorStore({ filename: path.join(dir, "facts.db"), vectorSearch }))
    )
  )

userFactsConformance("sqlite file (sqlite-vec)", sqliteFile("auto"))
userFactsConformance("sqlite file (brute force)", sqliteFile("bruteForce"))
