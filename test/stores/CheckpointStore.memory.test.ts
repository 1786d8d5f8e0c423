import { layerMemory } from "../../src/stores/CheckpointStore.js"
import { checkpointStoreConformance } from "./CheckpointStoreConformance.js"

checkpointStoreConformance("memory", () => layerMemory)
