/**
 * Headless Chromium for the viewer's browser tests: `playwright-core`
 * driving Debian's Chromium (`EAP_TEST_CHROMIUM`, exported by
 * `.ci/services.sh`; `/usr/bin/chromium` otherwise) — never a downloaded
 * browser. Without Chromium the browser suites are skipped and say why,
 * unless `EAP_REQUIRE_BACKENDS=1` (CI), where a missing browser fails the
 * run. Every page is watched: a dialog (`alert`, `confirm`, …), a page error
 * or a CSP violation is collected so a test can assert there was none.
 */
import { Effect } from "effect"
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { backendsRequired } from "./Backends.js"

/** The Chromium binary the tests drive. */
export const chromiumPath = process.env["EAP_TEST_CHROMIUM"] ?? "/usr/bin/chromium"

/**
 * Why the browser suites do not run here, or undefined when they do. With
 * `EAP_REQUIRE_BACKENDS=1` a missing Chromium throws instead.
 */
export const browserUnavailable = (): string | undefined => {
  if (existsSync(chromiumPath)) return undefined
  const reason = `chromium: ${chromiumPath} does not exist (run .ci/services.sh, or set EAP_TEST_CHROMIUM)`
  if (backendsRequired) throw new Error(`EAP_REQUIRE_BACKENDS=1 but ${reason}`)
  return reason
}

/** Where the tests keep their screenshots (gitignored): `test-results/viewer/`. */
export const artifactsDir: string = fileURLToPath(new URL("../../test-results/viewer/", import.meta.url))

/** Headless Chromium, closed with the scope. */
export const launch: Effect.Effect<Browser, never, import("effect").Scope.Scope> = Effect.acquireRelease(
  Effect.promise(() =>
    chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      // Containers run as root without a user namespace sandbox.
      args: ["--no-sandbox", "--disable-dev-shm-usage"]
    })
  ),
  (browser) => Effect.promise(() => browser.close())
)

/** What a page did that a viewer must never make it do. */
export interface Incidents {
  readonly dialogs: Array<string>
  readonly pageErrors: Array<string>
  readonly cspViolations: Array<string>
  readonly consoleErrors: Array<string>
}

/** A fresh page (its own context: own storage), watched for incidents; closed with the scope. */
export const openPage = (browser: Browser) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const context = await browser.newContext({ viewport: { width: 1360, height: 900 } })
      const page = await context.newPage()
      const incidents: Incidents = { dialogs: [], pageErrors: [], cspViolations: [], consoleErrors: [] }
      page.on("dialog", (dialog) => {
        incidents.dialogs.push(`${dialog.type()}: ${dialog.message()}`)
        void dialog.dismiss().catch(() => undefined)
      })
      page.on("pageerror", (error) => incidents.pageErrors.push(error.message))
      page.on("console", (message) => {
        if (message.type() !== "error") return
        const text = message.text()
        if (/Content Security Policy/i.test(text)) incidents.cspViolations.push(text)
        else incidents.consoleErrors.push(text)
      })
      return { page, incidents }
    }),
    ({ page }) => Effect.promise(() => page.context().close())
  )

/** Saves a full-page screenshot as `test-results/viewer/<name>.png`; returns its path. */
export const screenshot = (page: Page, name: string) =>
  Effect.promise(async () => {
    mkdirSync(artifactsDir, { recursive: true })
    const path = join(artifactsDir, `${name}.png`)
    await page.screenshot({ path, fullPage: true })
    return path
  })

/** Runs a page action as an Effect (a failure is a test failure, with the action's error). */
export const act = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

/**
 * The page's DOM as the tests' in-page callbacks use it: those run in
 * Chromium, while the tests compile without the DOM library (a test file
 * declares `document` with this type, for its callbacks only).
 */
export interface PageElement {
  readonly id: string
  readonly tagName: string
  readonly textContent: string | null
  readonly attributes: Iterable<{ readonly name: string }>
  readonly href?: string
  open?: boolean
  getAttribute(name: string): string | null
}

/** See {@link PageElement}. */
export interface PageDocument {
  readonly body: PageElement
  querySelectorAll(
    selector: string
  ): Iterable<PageElement> & { readonly length: number; forEach(f: (e: PageElement) => void): void }
}
