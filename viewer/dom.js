// @ts-check
/**
 * DOM helpers for the viewer. Everything a record holds is data, and data
 * reaches the page only as text: `el` sets children as text nodes, never as
 * HTML; `link` accepts only `http:` and `https:` targets; `keyed` updates a
 * container's children in place by key, so a changed item keeps its element
 * (an effect whose status changes is one card, changed, never a second one).
 */

/**
 * @typedef {string | number | Node | null | undefined | false} Child
 * @typedef {{ readonly className?: string, readonly title?: string, readonly attrs?: Readonly<Record<string, string>> }} Props
 */

/**
 * An element with text or element children.
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props | null} props
 * @param {ReadonlyArray<Child | ReadonlyArray<Child>>} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export const el = (tag, props, ...children) => {
  const node = document.createElement(tag)
  if (props !== null) {
    if (props.className !== undefined) node.className = props.className
    if (props.title !== undefined) node.title = props.title
    if (props.attrs !== undefined) {
      for (const [name, value] of Object.entries(props.attrs)) node.setAttribute(name, value)
    }
  }
  append(node, children)
  return node
}

/**
 * Appends children: strings and numbers as text nodes.
 *
 * @param {Node} node
 * @param {ReadonlyArray<Child | ReadonlyArray<Child>>} children
 */
export const append = (node, children) => {
  for (const child of children) {
    if (Array.isArray(child)) append(node, child)
    else if (child === null || child === undefined || child === false) continue
    else if (typeof child === "string" || typeof child === "number") {
      node.appendChild(document.createTextNode(String(child)))
    } else if (child instanceof Node) node.appendChild(child)
  }
}

/**
 * Replaces a node's children.
 *
 * @param {Element} node
 * @param {ReadonlyArray<Child | ReadonlyArray<Child>>} children
 */
export const fill = (node, ...children) => {
  node.replaceChildren()
  append(node, children)
}

/**
 * The URL when it is an absolute `http:` or `https:` URL; otherwise undefined
 * (a `javascript:` or `data:` target is never made a link).
 *
 * @param {string} text
 * @returns {string | undefined}
 */
export const safeHref = (text) => {
  try {
    const url = new URL(text)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined
  } catch {
    return undefined
  }
}

/**
 * A link to an `http:`/`https:` URL (opened in a new tab, no referrer), or
 * the text alone when the target is anything else.
 *
 * @param {string} href
 * @param {string} text
 * @returns {HTMLElement}
 */
export const link = (href, text) => {
  const safe = safeHref(href)
  if (safe === undefined) return el("span", { className: "unlinked" }, text)
  const a = el("a", { attrs: { rel: "noopener noreferrer", target: "_blank" } }, text)
  a.href = safe
  return a
}

/** @type {WeakMap<Element, Map<string, HTMLElement>>} */
const keyedChildren = new WeakMap()

/**
 * @typedef {{ readonly key: string, readonly tag?: keyof HTMLElementTagNameMap, readonly render: (node: HTMLElement, fresh: boolean) => void }} KeyedItem
 */

/**
 * Makes `container`'s children the items, in order, one element per key:
 * an item whose key was rendered before is rendered again into the same
 * element; elements of keys no longer present are removed.
 *
 * @param {Element} container
 * @param {ReadonlyArray<KeyedItem>} items
 */
export const keyed = (container, items) => {
  const previous = keyedChildren.get(container) ?? new Map()
  /** @type {Map<string, HTMLElement>} */
  const next = new Map()
  for (const item of items) {
    if (next.has(item.key)) continue
    const existing = previous.get(item.key)
    const node = existing ?? document.createElement(item.tag ?? "div")
    item.render(node, existing === undefined)
    next.set(item.key, node)
  }
  for (const [key, node] of previous) if (!next.has(key)) node.remove()
  // Appending moves an element already in place: the order follows the items.
  let cursor = /** @type {ChildNode | null} */ (container.firstChild)
  for (const node of next.values()) {
    if (cursor === node) cursor = node.nextSibling
    else container.insertBefore(node, cursor)
  }
  keyedChildren.set(container, next)
}

/**
 * Pretty JSON of a value for a `<pre>` (as text).
 *
 * @param {unknown} value
 * @returns {string}
 */
export const json = (value) => {
  if (value === undefined) return "—"
  if (typeof value === "string") return value
  try {
    return JSON.stringify(value, null, 2)
  } catch {
    return String(value)
  }
}
