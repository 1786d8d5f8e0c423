// @ts-check
/**
 * The plan as a DAG: each step in the column of its dependency depth (a step
 * without same-plan dependencies at depth 0, any other one column right of
 * its deepest dependency), drawn as SVG boxes with edges from a dependency to
 * its dependant. Texts are SVG text nodes (`textContent`), never markup.
 */

/**
 * @typedef {{ readonly step_id: string, readonly capability: string, readonly agent: string, readonly namespace?: string, readonly depends_on?: ReadonlyArray<string>, readonly implicit_deps?: ReadonlyArray<string> }} PlanStep
 * @typedef {{ readonly id: string, readonly step: PlanStep, readonly depth: number, readonly row: number }} DagNode
 * @typedef {{ readonly from: string, readonly to: string }} DagEdge
 * @typedef {{ readonly nodes: ReadonlyArray<DagNode>, readonly edges: ReadonlyArray<DagEdge>, readonly columns: number, readonly rows: number, readonly external: ReadonlyArray<DagEdge> }} DagLayout
 */

/**
 * Places the steps: depth by dependencies (`depends_on`, and `implicit_deps`
 * that name a step of the same plan), rows in plan order within a column.
 * Dependencies on steps of other phases are listed in `external`; a cycle
 * (a plan never passes validation with one) is cut where it closes.
 *
 * @param {ReadonlyArray<PlanStep>} steps
 * @returns {DagLayout}
 */
export const layoutDag = (steps) => {
  /** @type {Map<string, PlanStep>} */
  const byId = new Map()
  for (const step of steps) if (!byId.has(step.step_id)) byId.set(step.step_id, step)
  /** @type {Map<string, number>} */
  const depths = new Map()
  /** @type {Set<string>} */
  const visiting = new Set()
  /** @param {PlanStep} step */
  const depsOf = (step) => [...new Set([...(step.depends_on ?? []), ...(step.implicit_deps ?? [])])]
  /**
   * @param {string} id
   * @returns {number}
   */
  const depthOf = (id) => {
    const known = depths.get(id)
    if (known !== undefined) return known
    const step = byId.get(id)
    if (step === undefined || visiting.has(id)) return -1
    visiting.add(id)
    let depth = 0
    for (const dep of depsOf(step)) if (byId.has(dep)) depth = Math.max(depth, depthOf(dep) + 1)
    visiting.delete(id)
    depths.set(id, depth)
    return depth
  }
  /** @type {Array<number>} */
  const rowsPerColumn = []
  /** @type {Array<DagNode>} */
  const nodes = []
  for (const [id, step] of byId) {
    const depth = Math.max(0, depthOf(id))
    const row = rowsPerColumn[depth] ?? 0
    rowsPerColumn[depth] = row + 1
    nodes.push({ id, step, depth, row })
  }
  /** @type {Array<DagEdge>} */
  const edges = []
  /** @type {Array<DagEdge>} */
  const external = []
  for (const [id, step] of byId) {
    for (const dep of depsOf(step)) {
      if (byId.has(dep)) edges.push({ from: dep, to: id })
      else external.push({ from: dep, to: id })
    }
  }
  return {
    nodes,
    edges,
    external,
    columns: rowsPerColumn.length,
    rows: rowsPerColumn.reduce((max, n) => Math.max(max, n ?? 0), 0)
  }
}

const SVG = "http://www.w3.org/2000/svg"
const BOX_W = 190
const BOX_H = 54
const GAP_X = 60
const GAP_Y = 18

/**
 * @param {string} name
 * @param {Readonly<Record<string, string | number>>} attrs
 * @returns {SVGElement}
 */
const svg = (name, attrs) => {
  const node = document.createElementNS(SVG, name)
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value))
  return node
}

/**
 * @param {string} text
 * @param {number} max
 */
const clip = (text, max) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/**
 * The SVG drawing of a plan, each step box coloured by its status
 * (`statusOf(step_id)`: `succeeded`, `failed`, `running`, … or undefined
 * when it has not run).
 *
 * @param {ReadonlyArray<PlanStep>} steps
 * @param {(stepId: string) => string | undefined} statusOf
 * @returns {SVGElement}
 */
export const renderDag = (steps, statusOf) => {
  const layout = layoutDag(steps)
  const width = Math.max(1, layout.columns) * (BOX_W + GAP_X) - GAP_X + 2
  const height = Math.max(1, layout.rows) * (BOX_H + GAP_Y) - GAP_Y + 2
  const root = svg("svg", { class: "dag", width, height, viewBox: `0 0 ${width} ${height}`, role: "img" })
  const title = svg("title", {})
  title.textContent = `plan of ${steps.length} step${steps.length === 1 ? "" : "s"}`
  root.appendChild(title)
  /** @type {Map<string, DagNode>} */
  const at = new Map(layout.nodes.map((node) => [node.id, node]))
  const x = (/** @type {DagNode} */ node) => 1 + node.depth * (BOX_W + GAP_X)
  const y = (/** @type {DagNode} */ node) => 1 + node.row * (BOX_H + GAP_Y)
  for (const edge of layout.edges) {
    const from = at.get(edge.from)
    const to = at.get(edge.to)
    if (from === undefined || to === undefined) continue
    const x1 = x(from) + BOX_W
    const y1 = y(from) + BOX_H / 2
    const x2 = x(to)
    const y2 = y(to) + BOX_H / 2
    const mid = (x1 + x2) / 2
    root.appendChild(svg("path", { class: "edge", d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}` }))
  }
  for (const node of layout.nodes) {
    const status = statusOf(node.id) ?? "planned"
    const group = svg("g", { class: `node status-${/^[a-z_]+$/.test(status) ? status : "other"}` })
    group.setAttribute("data-step-id", node.id)
    group.appendChild(svg("rect", { x: x(node), y: y(node), width: BOX_W, height: BOX_H, rx: 6 }))
    const lines = [
      [clip(node.id, 26), "id"],
      [clip(node.step.capability, 28), "capability"],
      [clip(`${node.step.agent} · ${status}`, 30), "meta"]
    ]
    lines.forEach(([text, kind], i) => {
      const t = svg("text", { x: x(node) + 8, y: y(node) + 16 + i * 15, class: kind ?? "" })
      t.textContent = text ?? ""
      group.appendChild(t)
    })
    const tip = svg("title", {})
    tip.textContent = `${node.id}: ${node.step.namespace ?? ""}/${node.step.agent}/${node.step.capability} (${status})`
    group.appendChild(tip)
    root.appendChild(group)
  }
  return root
}
