import { Layer } from "effect"
import { layerMemory } from "../../src/stores/VectorStore.js"
import { userFactsConformance } from "./UserFactsConformance.js"

userFactsConformance("memory", () => Layer.orDie(layerMemory()))
