import { sqliteCheckpointStore } from "../support/Backends.js"
import { checkpointStoreConformance } from "./CheckpointStoreConformance.js"

checkpointStoreConformance("sqlite", sqliteCheckpointStore)
