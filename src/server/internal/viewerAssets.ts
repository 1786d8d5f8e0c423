/**
 * The execution viewer's static assets, served by the agent server: `GET /`
 * (the page), `GET /viewer/<file>` (its scripts and style sheet — only the
 * files of the package's `viewer/` folder, looked up by name in the list
 * read when the Layer is built, so no request path can reach another file)
 * and `GET /viewer/config.json` (what the page needs to know: the trace
 * link template, whether the server is read-only, whether it wants an API
 * key). These routes carry no recorded data and are public; every response
 * carries a strict Content-Security-Policy (`default-src 'self'`: no inline
 * script, nothing from another origin).
 *
 * @since 0.1.0
 */
import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"

/**
 * What the page is told about the server.
 *
 * @since 0.1.0
 * @category models
 */
export interface ViewerConfig {
  /** A link template for trace ids (`{traceId}` is replaced), e.g. Jaeger's `http://localhost:16686/trace/{traceId}`. */
  readonly traceUrl?: string | undefined
  /** The server serves no writes (no approvals from the page). */
  readonly readOnly: boolean
  /** The API routes want `Authorization: Bearer <key>`. */
  readonly authRequired: boolean
}

/**
 * Where the viewer's files are: `viewer/` at the package root. This module
 * sits three folders below it both as source (`src/server/internal/`) and
 * built (`dist/server/internal/`), in the repository and installed.
 *
 * @since 0.1.0
 * @category constants
 */
export const assetsDirectory: string = fileURLToPath(new URL("../../../viewer/", import.meta.url))

/**
 * The policy every viewer response carries.
 *
 * @since 0.1.0
 * @category constants
 */
export const contentSecurityPolicy =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const contentTypes: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png"
}

/** A file name the viewer may serve: one plain name with a known extension, no path. */
const servable = /^[a-z][a-z0-9-]*\.(html|js|css|svg|png)$/

interface Asset {
  readonly body: Uint8Array
  readonly contentType: string
  readonly etag: string
}

const securityHeaders = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY"
}

/**
 * The servable files of `directory`, read once (they are a few kilobytes
 * and never change while the server runs); an absent folder is an empty
 * map, logged.
 */
const readAssets = (directory: string): Effect.Effect<ReadonlyMap<string, Asset>> =>
  Effect.try(() => {
    const assets = new Map<string, Asset>()
    for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
      if (!entry.isFile() || !servable.test(entry.name)) continue
      const body = new Uint8Array(fs.readFileSync(`${directory}${entry.name}`))
      const extension = entry.name.slice(entry.name.lastIndexOf("."))
      assets.set(entry.name, {
        body,
        contentType: contentTypes[extension] ?? "application/octet-stream",
        etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`
      })
    }
    return assets
  }).pipe(
    Effect.catchAll((error) =>
      Effect.as(
        Effect.logWarning(`the execution viewer is not served: cannot read ${directory}: ${String(error.error)}`),
        new Map<string, Asset>()
      )
    )
  )

/** An asset's response: `304` when the client's `If-None-Match` names its ETag. */
const serve = (asset: Asset | undefined) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    if (asset === undefined) {
      return HttpServerResponse.text("Not Found", { status: 404, headers: securityHeaders })
    }
    const headers = { ...securityHeaders, etag: asset.etag, "cache-control": "no-cache" }
    return request.headers["if-none-match"] === asset.etag
      ? HttpServerResponse.empty({ status: 304, headers })
      : HttpServerResponse.uint8Array(asset.body, { contentType: asset.contentType, headers })
  })

/**
 * The page's configuration as JSON (`traceUrl` left out when not set).
 *
 * @since 0.1.0
 * @category utils
 */
export const configBody = (config: ViewerConfig): {
  readonly traceUrl?: string
  readonly readOnly: boolean
  readonly authRequired: boolean
} => ({
  ...(config.traceUrl === undefined ? {} : { traceUrl: config.traceUrl }),
  readOnly: config.readOnly,
  authRequired: config.authRequired
})

/**
 * Adds the viewer's routes to the API's router (as `HttpApiScalar.layer`
 * adds `/docs`): `GET /`, `GET /viewer/config.json`, `GET /viewer/:file`.
 * `HttpApiBuilder.Router.use` provides the router's (shared, memoized)
 * Layer itself, so the Layer requires nothing: merge it beside the API's
 * Layers under `HttpApiBuilder.serve`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: ViewerConfig): Layer.Layer<never> =>
  HttpApiBuilder.Router.use(Effect.fnUntraced(function*(router) {
    const assets = yield* readAssets(assetsDirectory)
    const settings = HttpServerResponse.unsafeJson(configBody(config), {
      headers: { ...securityHeaders, "cache-control": "no-store" }
    })
    yield* router.get("/", serve(assets.get("index.html")))
    yield* router.get("/viewer/config.json", Effect.succeed(settings))
    yield* router.get(
      "/viewer/:file",
      Effect.flatMap(
        HttpRouter.params,
        (params) => serve(params.file === undefined ? undefined : assets.get(params.file))
      )
    )
  }))
