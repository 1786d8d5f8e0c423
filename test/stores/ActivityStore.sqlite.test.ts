import { sqliteActivityStore } from "../support/ActivityBackends.js"
import { activityStoreConformance } from "./ActivityStoreConformance.js"

activityStoreConformance("sqlite", sqliteActivityStore)
