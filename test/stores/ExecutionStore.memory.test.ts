import { layerMemory } from "../../src/stores/ExecutionStore.js"
import { executionStoreConformance } from "./ExecutionStoreConformance.js"

executionStoreConformance("memory", layerMemory)
