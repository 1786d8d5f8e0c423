import { Layer } from "effect"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { sqliteCheckpointStore } from "../support/Backends.js"
import { checkpointStoreConformance } from "./CheckpointStoreConformance.js"
import { undecodableCheckpoints } from "./CheckpointStoreUndecodable.js"

checkpointStoreConformance("sqlite", sqliteCheckpointStore)
undecodableCheckpoints("sqlite", () => ({
  layer: SqlStores.layerCheckpointStore().pipe(Layer.provideMerge(Sqlite.layerClient(":memory:")), Layer.orDie),
  table: "eap_checkpoints"
}))
