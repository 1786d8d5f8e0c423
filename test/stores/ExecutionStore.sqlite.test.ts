import { sqliteStore } from "../support/Backends.js"
import { executionStoreConformance } from "./ExecutionStoreConformance.js"

executionStoreConformance("sqlite", sqliteStore)
