/**
 * The offline model's memory (see the header of `OfflineModel.ts`): the
 * lines of the memory hooks' view in a prompt's `<agent_memory>` section
 * whose words overlap the request, best first. Only the view the built-in
 * memory hooks write counts — it opens with their notice — so other RAG
 * text in the section (documents, desk notes) is never presented as
 * something an earlier request recorded.
 */
import { tokenize } from "./offlineWords.js"

/** How the memory view's first line starts (`MemoryHooks`' notice, `internal/memoryView.ts`). */
export const viewNotice = "Memory of earlier requests in domain "

/** At most this many memory lines are quoted. */
export const maxQuoted = 3

// The view's own field names are not evidence of relevance: a request that
// says "summary" or "outcome" would otherwise match every line.
const formatWords: ReadonlySet<string> = new Set(tokenize("time outcome tool entities summary knowledge"))

/** The view's legend line, shown when its entries are in the compact tuple form. */
const legendStart = "Events are ["

interface View {
  /** The entry lines (`- …`) of every memory view in the section, in the view's order (newest first). */
  readonly lines: ReadonlyArray<string>
  readonly legend: string | undefined
}

const readViews = (section: string): View => {
  const lines: Array<string> = []
  let legend: string | undefined
  let inView = false
  for (const line of section.split("\n")) {
    if (line.startsWith(viewNotice)) inView = true
    // The enrichment separates its view from other RAG text with a blank line.
    else if (line.trim().length === 0) inView = false
    else if (inView && line.startsWith("- ")) lines.push(line)
    else if (inView && line.startsWith(legendStart)) legend = line
  }
  return { lines, legend }
}

// The same event recorded by several requests differs only in its time:
// quote it once (the first, i.e. the newest).
const withoutTime = (line: string): string => line.replace(/^- time=[^;]*; /, "- ").replace(/^- \[[^|]*\| /, "- [")

/**
 * The memory lines of an `<agent_memory>` section that share a word (stem)
 * with the request: the ones sharing the most first, ties in the view's
 * order, at most {@link maxQuoted}, each event once — and the view's legend
 * when a quoted line is in the tuple form (`- [time | …]`) it explains.
 *
 * @since 0.1.0
 * @category utils
 */
export const relevantMemory = (
  section: string | undefined,
  request: string
): { readonly lines: ReadonlyArray<string>; readonly legend: string | undefined } => {
  const none = { lines: [], legend: undefined }
  if (section === undefined) return none
  const wanted = new Set(tokenize(request).filter((word) => !formatWords.has(word)))
  if (wanted.size === 0) return none
  const view = readViews(section)
  const seen = new Set<string>()
  const scored: Array<{ readonly line: string; readonly score: number; readonly index: number }> = []
  for (const [index, line] of view.lines.entries()) {
    const key = withoutTime(line)
    if (seen.has(key)) continue
    seen.add(key)
    const score = tokenize(line).filter((word) => wanted.has(word)).length
    if (score > 0) scored.push({ line, score, index })
  }
  const lines = scored
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, maxQuoted)
    .map((s) => s.line)
  return { lines, legend: lines.some((line) => line.startsWith("- [")) ? view.legend : undefined }
}
