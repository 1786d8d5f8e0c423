import { layerMemory } from "../../src/stores/ActivityStore.js"
import { activityStoreConformance } from "./ActivityStoreConformance.js"

activityStoreConformance("memory", () => layerMemory, 100)
