/**
 * The viewer's pure parts, run in Node: the SSE parser (events split at any
 * byte, CRLF / CR / LF, comments, several data lines), the DAG layout, the
 * plan digest (the library's `Approval.planText` and Node's SHA-256 are the
 * reference), the list's query string, trace links and hash routes. The
 * DOM-bound parts are exercised in Chromium (test/browser/).
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { Approval, RoutingPlan } from "effect-agent-pipeline"
import { createHash } from "node:crypto"

interface SseEvent {
  readonly event: string
  readonly data: string
  readonly id: string | undefined
}
interface PlanStep {
  readonly step_id: string
  readonly capability: string
  readonly agent: string
  readonly depends_on?: ReadonlyArray<string>
  readonly implicit_deps?: ReadonlyArray<string>
}
interface Layout {
  readonly nodes: ReadonlyArray<{ readonly id: string; readonly depth: number; readonly row: number }>
  readonly edges: ReadonlyArray<{ readonly from: string; readonly to: string }>
  readonly external: ReadonlyArray<{ readonly from: string; readonly to: string }>
  readonly columns: number
  readonly rows: number
}

// The viewer's modules are plain JavaScript (typechecked by tsconfig.viewer.json): loaded by URL, typed here.
const load = <A>(file: string): Promise<A> =>
  import(new URL(`../../viewer/${file}`, import.meta.url).href) as Promise<A>
const Sse = await load<
  { sseParser: (onEvent: (e: SseEvent) => void) => { push: (s: string) => void; end: () => void } }
>(
  "sse.js"
)
const Dag = await load<{ layoutDag: (steps: ReadonlyArray<PlanStep>) => Layout }>("dag.js")
const Digest = await load<{
  canonicalJson: (value: unknown) => string
  sha256Hex: (text: string) => string
  planDigest: (plan: unknown) => string
}>("digest.js")
const List = await load<{
  listQuery: (f: {
    status: ReadonlyArray<string>
    hook: string
    from?: number | undefined
    before?: number | undefined
    cursor?: string | undefined
    limit?: number
  }) => string
}>("list.js")
const Record = await load<{ traceLink: (template?: string, traceId?: string) => string | undefined }>("record.js")
const Route = await load<{ route: (hash: string) => { page: string; id?: string } }>("route.js")

const parseAll = (chunks: ReadonlyArray<string>): Array<SseEvent> => {
  const events: Array<SseEvent> = []
  const parser = Sse.sseParser((e) => events.push(e))
  for (const chunk of chunks) parser.push(chunk)
  parser.end()
  return events
}

describe("SSE parsing", () => {
  const wire =
    "id: 1\nevent: record\ndata: {\"a\":1}\n\n: keep-alive\n\nid: 2\r\nevent: end\r\ndata: {\"status\":\"succeeded\"}\r\n\r\n"
  const expected = [
    { event: "record", data: "{\"a\":1}", id: "1" },
    { event: "end", data: "{\"status\":\"succeeded\"}", id: "2" }
  ]

  it("reads events, ids and comments, LF and CRLF alike", () => {
    expect(parseAll([wire])).toEqual(expected)
  })

  it("the same events however the bytes are split into chunks", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.uniqueArray(FastCheck.integer({ min: 1, max: wire.length - 1 })), (cuts) => {
        const sorted = [...cuts].sort((a, b) => a - b)
        const chunks = [0, ...sorted].map((start, i) => wire.slice(start, sorted[i] ?? wire.length))
        expect(parseAll(chunks)).toEqual(expected)
      })
    )
  })

  it("joins data lines with newlines, defaults the event to message, takes CR line ends, keeps the last id", () => {
    expect(parseAll(["data: one\rdata:two\r\rid: 7\nevent: x\ndata\n\n"])).toEqual([
      { event: "message", data: "one\ntwo", id: undefined },
      { event: "x", data: "", id: "7" }
    ])
  })

  it("an event without a blank line after it is never dispatched; an event without data neither", () => {
    expect(parseAll(["event: lonely\n\ndata: cut"])).toEqual([])
  })
})

describe("the plan DAG's layout", () => {
  const step = (id: string, deps: ReadonlyArray<string> = [], implicit: ReadonlyArray<string> = []): PlanStep => ({
    step_id: id,
    capability: "c",
    agent: "a",
    depends_on: deps,
    implicit_deps: implicit
  })

  it("places a step one column right of its deepest dependency, rows in plan order", () => {
    const layout = Dag.layoutDag([step("a"), step("b"), step("c", ["a"]), step("d", ["c", "b"]), step("e", ["a"])])
    expect(layout.nodes.map((n) => [n.id, n.depth, n.row])).toEqual([
      ["a", 0, 0],
      ["b", 0, 1],
      ["c", 1, 0],
      ["d", 2, 0],
      ["e", 1, 1]
    ])
    expect(layout.edges).toEqual([
      { from: "a", to: "c" },
      { from: "c", to: "d" },
      { from: "b", to: "d" },
      { from: "a", to: "e" }
    ])
    expect([layout.columns, layout.rows]).toEqual([3, 2])
  })

  it("a dependency on an earlier phase's step is external, not a column", () => {
    const layout = Dag.layoutDag([step("x", [], ["s1"]), step("y", ["x"])])
    expect(layout.nodes.map((n) => n.depth)).toEqual([0, 1])
    expect(layout.external).toEqual([{ from: "s1", to: "x" }])
  })

  it("a cycle (never a valid plan) is cut, every step still placed once", () => {
    const layout = Dag.layoutDag([step("a", ["b"]), step("b", ["a"]), step("a")])
    expect(layout.nodes.map((n) => n.id)).toEqual(["a", "b"])
    expect(layout.nodes.every((n) => n.depth >= 0)).toBe(true)
  })

  it("every edge goes from a lower column to a higher one", () => {
    const ids = ["s1", "s2", "s3", "s4", "s5", "s6"]
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.subarray(ids), { minLength: ids.length, maxLength: ids.length }),
        (deps) => {
          // Only dependencies on earlier steps: a DAG.
          const steps = ids.map((id, i) => step(id, deps[i]!.filter((d) => ids.indexOf(d) < i)))
          const layout = Dag.layoutDag(steps)
          const depth = new Map(layout.nodes.map((n) => [n.id, n.depth]))
          for (const edge of layout.edges) expect(depth.get(edge.from)!).toBeLessThan(depth.get(edge.to)!)
        }
      )
    )
  })
})

describe("the plan digest the viewer echoes", () => {
  it("SHA-256 matches Node's on any text (UTF-8, every padding length)", () => {
    for (const text of ["", "abc", "a".repeat(55), "a".repeat(56), "a".repeat(64), "é€😀\u0000"]) {
      expect(Digest.sha256Hex(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"))
    }
    FastCheck.assert(
      FastCheck.property(FastCheck.string({ unit: "binary", maxLength: 300 }), (text) => {
        expect(Digest.sha256Hex(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"))
      })
    )
  })

  it("is the library's planDigest of the plan as the API encodes it", () => {
    const plan = RoutingPlan.decodeParsed({
      steps: [
        {
          step_id: "c1",
          namespace: "demo-tools",
          agent: "fx-service",
          capability: "convert_currency",
          parameters: { to: "EUR", amount: 100.5, from: "USD", note: "ünï \"q\" </agent_memory>" },
          depends_on: []
        },
        {
          step_id: "c2",
          namespace: "n",
          agent: "a",
          capability: "c",
          depends_on: ["c1"],
          metadata: { z: 1, a: [null] }
        }
      ],
      terminal: true,
      reasoning: "why"
    })
    if (plan._tag === "Left") return expect.unreachable(plan.left.message)
    const encoded = JSON.parse(JSON.stringify(RoutingPlan.encode(plan.right))) as unknown
    expect(Digest.canonicalJson(encoded)).toBe(Approval.planText(plan.right))
    expect(Digest.planDigest(encoded)).toBe(createHash("sha256").update(Approval.planText(plan.right)).digest("hex"))
  })

  it("canonical JSON sorts keys by UTF-16 code units, drops undefined members, refuses non-JSON", () => {
    expect(Digest.canonicalJson({ b: 1, a: { d: undefined, c: [true, null, "x"] }, "é": 0, Z: 2 })).toBe(
      "{\"Z\":2,\"a\":{\"c\":[true,null,\"x\"]},\"b\":1,\"é\":0}"
    )
    expect(() => Digest.canonicalJson({ n: Number.NaN })).toThrow(TypeError)
    expect(() => Digest.canonicalJson(() => 1)).toThrow(TypeError)
  })
})

describe("the list's query, trace links, routes", () => {
  it("sends only the filters set, the cursor of the page asked for", () => {
    expect(List.listQuery({ status: [], hook: " " })).toBe("limit=25")
    expect(
      new URLSearchParams(
        List.listQuery({ status: ["failed", "suspended"], hook: "audit & co", from: 10, before: 20, cursor: "c=1" })
      ).toString()
    ).toBe("status=failed%2Csuspended&hook=audit+%26+co&startedFrom=10&startedBefore=20&limit=25&cursor=c%3D1")
  })

  it("a trace link only for an http(s) template with {traceId}, the id URL-encoded", () => {
    expect(Record.traceLink("http://localhost:16686/trace/{traceId}", "abc123")).toBe(
      "http://localhost:16686/trace/abc123"
    )
    expect(Record.traceLink("https://t.example/{traceId}?q={traceId}", "a/b\"<x>")).toBe(
      "https://t.example/a%2Fb%22%3Cx%3E?q=a%2Fb%22%3Cx%3E"
    )
    expect(Record.traceLink("javascript:alert('{traceId}')", "x")).toBeUndefined()
    expect(Record.traceLink("data:text/html,{traceId}", "x")).toBeUndefined()
    expect(Record.traceLink("http://no-placeholder", "x")).toBeUndefined()
    expect(Record.traceLink(undefined, "x")).toBeUndefined()
  })

  it("routes #/records/<id> to the detail (the id decoded), anything else to the list", () => {
    expect(Route.route("#/records/demo%2F1%20x")).toEqual({ page: "detail", id: "demo/1 x" })
    expect(Route.route("#/")).toEqual({ page: "list" })
    expect(Route.route("")).toEqual({ page: "list" })
    expect(Route.route("#/records/%E0%A4%A")).toEqual({ page: "list" })
  })
})
