/**
 * A request's cache scope: the partition (its tenant, or the global one) and
 * the exact-match keys (the other configured dimensions' values) a semantic
 * cache entry is written and looked up under.
 */
import { createHash } from "node:crypto"
import type { PipelineContext } from "../../domain/PipelineContext.js"
import type { Dimension, Dimensions } from "./semanticCacheOptions.js"

/** The partition of entries written without a tenant. */
export const globalPartition = "global"

/** The partition of a tenant's entries (prefixed: a tenant named "global" stays its own). */
export const partitionFor = (tenant: string | null): string => tenant === null ? globalPartition : `tenant:${tenant}`

/**
 * The `tools` key of a tool set: a hash of its sorted, de-duplicated names
 * (a set of any size fits one key; order does not matter).
 */
export const toolSetKey = (names: ReadonlyArray<string>): string =>
  createHash("sha256").update(JSON.stringify([...new Set(names)].sort())).digest("hex").slice(0, 32)

/** A dimension read from request metadata (a non-empty string), else `fallback`. */
export const fromMetadata = (key: string, fallback?: string) => (context: PipelineContext): string | undefined => {
  const value = context.metadata[key]
  return typeof value === "string" && value.length > 0 ? value : fallback
}

const defaultTenant = fromMetadata("tenant_id")
const defaultLocale = fromMetadata("locale", "en")

/** What the configuration says each dimension is (tenant and locale have defaults). */
export interface ResolvedDimensions {
  readonly tenant: Dimension | undefined
  readonly locale: Dimension | undefined
  readonly user: Dimension | undefined
  readonly model: Dimension | undefined
  readonly tools: Dimensions["tools"]
}

export const resolveDimensions = (dimensions: Dimensions = {}): ResolvedDimensions => ({
  tenant: dimensions.tenant === false ? undefined : dimensions.tenant ?? defaultTenant,
  locale: dimensions.locale === false ? undefined : dimensions.locale ?? defaultLocale,
  user: dimensions.user,
  model: dimensions.model,
  tools: dimensions.tools
})

/** A request's scope, or the dimension that makes it uncacheable. */
export type Scope =
  | { readonly _tag: "Scope"; readonly partition: string; readonly keys: Readonly<Record<string, string>> }
  | { readonly _tag: "Missing"; readonly dimension: string }

// A throwing dimension function makes the request uncacheable rather than
// failing it: the cache is an optimisation.
const attempt = <A>(f: () => A): A | undefined => {
  try {
    return f()
  } catch {
    return undefined
  }
}

const valueOf = (dimension: Dimension, context: PipelineContext): string | undefined =>
  typeof dimension === "string" ? dimension : attempt(() => dimension(context))

const valid = (value: unknown): value is string => typeof value === "string" && value.length > 0 && value.length <= 256

const toolNames = (tools: NonNullable<Dimensions["tools"]>, context: PipelineContext): unknown =>
  typeof tools === "function" ? attempt(() => tools(context)) : tools

export const scopeOf = (dimensions: ResolvedDimensions, context: PipelineContext): Scope => {
  let tenant: string | null = null
  if (dimensions.tenant !== undefined) {
    const value = valueOf(dimensions.tenant, context)
    if (value !== undefined) {
      if (!valid(value)) return { _tag: "Missing", dimension: "tenant" }
      tenant = value
    }
  }
  const keys: Record<string, string> = {}
  for (const name of ["locale", "model", "user"] as const) {
    const dimension = dimensions[name]
    if (dimension === undefined) continue
    const value = valueOf(dimension, context)
    if (!valid(value)) return { _tag: "Missing", dimension: name }
    keys[name] = value
  }
  if (dimensions.tools !== undefined) {
    const names = toolNames(dimensions.tools, context)
    if (!Array.isArray(names) || !names.every((n): n is string => typeof n === "string")) {
      return { _tag: "Missing", dimension: "tools" }
    }
    keys["tools"] = toolSetKey(names)
  }
  // Which dimensions are configured: an entry written under another
  // configuration (more or fewer keys) is never found by this one.
  keys["vary"] = Object.keys(keys).sort().join(",") || "none"
  return { _tag: "Scope", partition: partitionFor(tenant), keys }
}
