/**
 * The viewer's static routes over a real socket: `GET /` is the page with a
 * strict Content-Security-Policy, `GET /viewer/<file>` serves exactly the
 * files of `viewer/` with their content types (every module the page
 * imports among them), answers `304` to a matching `If-None-Match`, and no
 * spelling of a path — `..`, encoded slashes and dots, absolute paths —
 * reaches any other file; `GET /viewer/config.json` says what the page
 * needs. The page itself loads nothing inline and nothing from elsewhere.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { createServer, request } from "node:http"
import { fileURLToPath } from "node:url"
import * as ViewerAssets from "../../src/server/internal/viewerAssets.js"

const viewerDir = fileURLToPath(new URL("../../viewer/", import.meta.url))

class Ping extends HttpApiGroup.make("ping").add(HttpApiEndpoint.get("ping", "/v1/ping").addSuccess(Schema.String)) {}
class TestApi extends HttpApi.make("test").add(Ping) {}

/** A server of a one-route API with the viewer's routes beside it; its base URL. */
const serve = (config: ViewerAssets.ViewerConfig) =>
  Effect.gen(function*() {
    const server = HttpApiBuilder.serve().pipe(
      Layer.provide(ViewerAssets.layer(config)),
      Layer.provide(
        HttpApiBuilder.api(TestApi).pipe(
          Layer.provide(HttpApiBuilder.group(TestApi, "ping", (h) => h.handle("ping", () => Effect.succeed("pong"))))
        )
      ),
      Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
    )
    const context = yield* Layer.build(server)
    const address = yield* HttpServer.HttpServer.pipe(Effect.provide(context), Effect.map((s) => s.address))
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("not a TCP server")
    return address.port
  })

interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly body: string
}

/** A GET of `path` exactly as written (no URL normalization on the way). */
const get = (port: number, path: string, headers: Record<string, string> = {}) =>
  Effect.async<Answer>((resume) => {
    const req = request({ host: "127.0.0.1", port, path, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () =>
        resume(Effect.succeed({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString("utf8")
        })))
    })
    req.on("error", (error) => resume(Effect.die(error)))
    req.end()
  })

const open = { readOnly: false, authRequired: false }

describe("viewer assets", () => {
  it.scoped("GET / is the page, with a strict CSP and no inline script or foreign source", () =>
    Effect.gen(function*() {
      const port = yield* serve(open)
      const page = yield* get(port, "/")
      expect(page.status).toBe(200)
      expect(page.headers["content-type"]).toBe("text/html; charset=utf-8")
      const csp = String(page.headers["content-security-policy"])
      expect(csp).toContain("default-src 'self'")
      expect(csp).toContain("script-src 'self'")
      expect(csp).not.toContain("unsafe-inline")
      expect(csp).toContain("frame-ancestors 'none'")
      expect(page.headers["x-content-type-options"]).toBe("nosniff")
      expect(page.headers["cache-control"]).toBe("no-cache")
      expect(page.body).toBe(readFileSync(`${viewerDir}index.html`, "utf8"))
      // Every script is a file of the page's own origin; no inline script, style or handler.
      expect([...page.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)].map((m) => [m[1], m[2]])).toEqual([
        [" type=\"module\" src=\"/viewer/app.js\"", ""]
      ])
      expect(page.body).not.toMatch(/\son[a-z]+=|style=|https?:\/\//)
      // The API beside it still answers.
      expect((yield* get(port, "/v1/ping")).body).toBe("\"pong\"")
    }))

  it.scoped("serves every file of viewer/ with its type; every module the page imports is one of them", () =>
    Effect.gen(function*() {
      const port = yield* serve(open)
      const files = readdirSync(viewerDir)
      expect(files).toContain("app.js")
      for (const file of files) {
        const answer = yield* get(port, `/viewer/${file}`)
        expect(answer.status, file).toBe(200)
        expect(answer.body, file).toBe(readFileSync(`${viewerDir}${file}`, "utf8"))
        const type = file.endsWith(".js")
          ? "text/javascript; charset=utf-8"
          : file.endsWith(".css")
          ? "text/css; charset=utf-8"
          : file.endsWith(".svg")
          ? "image/svg+xml"
          : "text/html; charset=utf-8"
        expect(answer.headers["content-type"], file).toBe(type)
        expect(answer.headers["content-security-policy"], file).toBe(ViewerAssets.contentSecurityPolicy)
      }
      for (const file of files.filter((f) => f.endsWith(".js"))) {
        const text = readFileSync(`${viewerDir}${file}`, "utf8")
        expect(text.startsWith("// @ts-check\n"), `${file} is typechecked`).toBe(true)
        for (const [, imported] of text.matchAll(/^import [^"]*"\.\/([\w-]+\.js)"/gm)) {
          expect(files, `${file} imports ${imported}`).toContain(imported)
        }
        // Recorded strings reach the page as text only.
        expect(text, file).not.toMatch(
          /\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|\beval\(|new Function/
        )
      }
    }))

  it.scoped("answers 304 to the ETag it sent", () =>
    Effect.gen(function*() {
      const port = yield* serve(open)
      const first = yield* get(port, "/viewer/app.js")
      const etag = String(first.headers["etag"])
      expect(etag).toMatch(/^"[\w-]{27}"$/)
      const again = yield* get(port, "/viewer/app.js", { "if-none-match": etag })
      expect(again.status).toBe(304)
      expect(again.body).toBe("")
      expect((yield* get(port, "/viewer/app.js", { "if-none-match": "\"other\"" })).status).toBe(200)
    }))

  it.scoped("no path outside the folder's files is served", () =>
    Effect.gen(function*() {
      const port = yield* serve(open)
      const secret = readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8")
      for (
        const path of [
          "/viewer/../package.json",
          "/viewer/%2e%2e/package.json",
          "/viewer/..%2Fpackage.json",
          "/viewer/%2e%2e%2fpackage.json",
          "/viewer/..%5Cpackage.json",
          "/viewer//etc/passwd",
          "/viewer/%2Fetc%2Fpasswd",
          "/viewer/app.js%00.css",
          "/viewer/APP.JS",
          "/viewer/",
          "/viewer/.",
          "/viewer/nope.js",
          "/viewer/index.html/../../package.json",
          "/../package.json",
          "/viewer/../src/index.ts"
        ]
      ) {
        const answer = yield* get(port, path)
        expect(answer.status, path).not.toBe(200)
        expect(answer.body, path).not.toContain(secret.slice(0, 40))
        expect(answer.body, path).not.toContain("root:")
      }
    }))

  it.scoped("config.json says what the page needs, uncached", () =>
    Effect.gen(function*() {
      const plain = yield* get(yield* serve(open), "/viewer/config.json")
      expect(plain.status).toBe(200)
      expect(plain.headers["cache-control"]).toBe("no-store")
      expect(JSON.parse(plain.body)).toEqual({ readOnly: false, authRequired: false })
      const port = yield* serve({
        traceUrl: "http://localhost:16686/trace/{traceId}",
        readOnly: true,
        authRequired: true
      })
      expect(JSON.parse((yield* get(port, "/viewer/config.json")).body)).toEqual({
        traceUrl: "http://localhost:16686/trace/{traceId}",
        readOnly: true,
        authRequired: true
      })
    }))

  it("the folder is found from the module's own location (src/ and dist/ sit at the same depth)", () => {
    expect(ViewerAssets.assetsDirectory).toBe(viewerDir)
  })
})
