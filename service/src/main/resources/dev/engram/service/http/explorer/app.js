// Engram's memory explorer: a page over the HTTP API, with no data of its own and no dependencies.
// Everything it shows comes from the API with the key its user gives; every value reaches the page as text
// (textContent, attributes), never as markup.
"use strict";

const KEY_STORE = "engram.key";
const view = document.getElementById("view");
const crumbs = document.getElementById("crumbs");
const statusLine = document.getElementById("status");
let modes = null;
// Each navigation has a number: a reply that arrives after the user went elsewhere is not shown.
let navigation = 0;
const stale = (nav) => nav !== navigation;

// ---- DOM -------------------------------------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const SVG = "http://www.w3.org/2000/svg";
function s(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

function show(...children) {
  if (children.length && typeof children[0] === "number") {
    if (stale(children.shift())) return;
  }
  view.replaceChildren();
  append(view, children);
}

function setCrumbs(parts) {
  crumbs.replaceChildren();
  parts.forEach(([label, href], i) => {
    if (i > 0) crumbs.appendChild(h("span", { class: "sep" }, "/"));
    crumbs.appendChild(href ? h("a", { href }, label) : h("span", {}, label));
  });
}

const enc = encodeURIComponent;
const nsHref = (ns) => "#/ns/" + enc(ns);
const docHref = (ns, id) => nsHref(ns) + "/doc/" + enc(id);
const entityHref = (ns, id) => nsHref(ns) + "/entity/" + enc(id);
const fmtTime = (t) => (t ? new Date(t).toLocaleString() : "—");
const fmtNum = (n) => (typeof n === "number" ? (Number.isInteger(n) ? n.toLocaleString() : n.toFixed(3)) : String(n));
const statusTag = (st) => h("span", { class: "status " + st }, st);

function table(columns, rows, empty) {
  if (!rows.length) return h("p", { class: "muted" }, empty || "None.");
  return h("table", {},
    h("thead", {}, h("tr", {}, columns.map(([label]) => h("th", {}, label)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, columns.map(([, cell]) => h("td", {}, cell(row)))))));
}

// ---- API -------------------------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  const key = sessionStorage.getItem(KEY_STORE);
  if (key) headers.Authorization = "Bearer " + key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try {
    data = await r.json();
  } catch (e) {
    data = null;
  }
  if (!r.ok) {
    const err = (data && data.error) || {};
    throw new ApiError(r.status, err.code || "http_" + r.status, err.message || r.statusText);
  }
  if (data && data.served_by) statusLine.textContent = "Served by " + data.served_by;
  return data;
}

const nsPath = (ns) => "/v1/namespaces/" + enc(ns);

function failure(e) {
  if (e instanceof ApiError && e.status === 401) {
    askForKey();
    return h("p", { class: "error", role: "alert" }, "This instance needs an API key: enter one above.");
  }
  if (e instanceof ApiError && (e.code === "forbidden_host" || e.code === "forbidden_origin")) {
    return h("p", { class: "error", role: "alert" }, e.message); // not about a key: the message says what to set
  }
  if (e instanceof ApiError && e.status === 403) {
    return h("p", { class: "error", role: "alert" }, "Your key may not do this: " + e.message);
  }
  const retry = e instanceof ApiError && e.status === 503 ? " (the instance is starting or rebalancing; retry shortly)" : "";
  return h("p", { class: "error", role: "alert" }, (e.message || String(e)) + retry);
}

function askForKey() {
  document.getElementById("key-form").hidden = false;
  document.getElementById("key-input").focus();
}

document.getElementById("key-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  sessionStorage.setItem(KEY_STORE, document.getElementById("key-input").value.trim());
  document.getElementById("key-input").value = "";
  document.getElementById("key-form").hidden = true;
  route();
});
document.getElementById("key-forget").addEventListener("click", () => {
  sessionStorage.removeItem(KEY_STORE);
  route();
});

// ---- pages -----------------------------------------------------------------------------------------------------

async function home(nav) {
  setCrumbs([["Namespaces"]]);
  const list = await api("GET", "/v1/namespaces");
  // the counts, a few namespaces at a time so that a long list never takes every request slot of the instance
  const rows = [];
  for (let i = 0; i < list.namespaces.length; i += 8) {
    if (stale(nav)) return;
    rows.push(...await Promise.all(list.namespaces.slice(i, i + 8).map(async (ns) => {
      try {
        return await api("GET", nsPath(ns));
      } catch (e) {
        return { namespace: ns, error: e.message };
      }
    })));
  }
  show(nav,
    h("h1", {}, "Namespaces"),
    list.incomplete
      ? h("p", { class: "error" }, "Some instances did not answer, so their namespaces are missing" + (list.unreachable.length ? ": " + list.unreachable.join(", ") : "."))
      : null,
    h("p", { class: "muted" }, list.namespaces.length + " namespaces over " + list.instances + " instance(s)."),
    table(
      [
        ["Namespace", (r) => h("a", { href: nsHref(r.namespace), class: "namespace-link" }, r.namespace)],
        ["Documents", (r) => (r.error ? r.error : fmtNum(r.documents))],
        ["Passages", (r) => (r.error ? "" : fmtNum(r.passages))],
        ["Entities", (r) => (r.error ? "" : fmtNum(r.entities))],
        ["Updated", (r) => (r.watermark ? fmtTime(r.watermark.updated_at) : "")],
      ],
      rows,
      "No namespace has memory yet: send documents with `./engram ingest`, PUT /v1/namespaces/{ns}/documents/{id}, or the documents topic."));
}

async function loadModes() {
  if (modes) return modes;
  try {
    const doc = await fetch("/openapi.json").then((r) => r.json());
    modes = doc.components.schemas.RetrieveRequest.properties.mode.enum;
  } catch (e) {
    modes = ["hybrid", "dense"];
  }
  return modes;
}

function searchForm(ns, query, mode, topK) {
  const input = h("input", { type: "search", name: "q", value: query || "", placeholder: "Ask the memory…", required: true, "aria-label": "Query" });
  const select = h("select", { name: "mode", "aria-label": "Mode" }, (modes || ["hybrid"]).map((m) => h("option", { value: m, selected: m === mode }, m)));
  const k = h("input", { type: "number", name: "k", min: 1, max: 100, value: topK || 5, "aria-label": "Top k", class: "top-k" });
  return h("form", {
    class: "search",
    onsubmit: (ev) => {
      ev.preventDefault();
      const params = new URLSearchParams({ q: input.value, mode: select.value, k: k.value });
      go(nsHref(ns) + "/search?" + params.toString());
    },
  }, input, select, k, h("button", { type: "submit", class: "primary" }, "Search"));
}

async function namespacePage(nav, ns) {
  setCrumbs([["Namespaces", "#/"], [ns]]);
  await loadModes();
  const [info, docs, merges, reviews] = await Promise.all([
    api("GET", nsPath(ns)),
    api("GET", nsPath(ns) + "/documents?order=recent&limit=10"),
    api("GET", nsPath(ns) + "/merges?limit=20"),
    api("GET", nsPath(ns) + "/reviews?limit=1"),
  ]);
  const decisions = merges.merges.flatMap((g) => g.decisions.map((d) => ({ ...d, group: g.id })))
    .sort((a, b) => String(b.at).localeCompare(String(a.at))).slice(0, 10);
  show(nav,
    h("h1", {}, ns),
    searchForm(ns, "", "hybrid", 5),
    h("div", { class: "cards" },
      [["documents", info.documents], ["passages", info.passages], ["entities", info.entities], ["surfaces", info.surfaces],
        ["in review", reviews.total + reviews.entity_pairs.total]]
        .map(([label, n]) => h("div", { class: "card", "data-count": label }, h("b", {}, fmtNum(n)), label))),
    h("p", { class: "tags" }, Object.entries(info.documents_by_status || {}).map(([st, n]) => h("span", {}, st + " " + n))),
    h("p", { class: "muted" }, "Memory version " + info.watermark.version + ", updated " + fmtTime(info.watermark.updated_at) + ". ",
      h("a", { href: nsHref(ns) + "/documents" }, "All documents"), " · ", h("a", { href: nsHref(ns) + "/themes" }, "Themes")),
    h("h2", {}, "Recently changed documents"),
    documentTable(ns, docs.documents),
    h("h2", {}, "Recent merges"),
    table(
      [
        ["Entity", (d) => h("a", { href: entityHref(ns, d.entity_id) }, d.entity_name)],
        ["Other", (d) => h("a", { href: entityHref(ns, d.other_id) }, d.other_name)],
        ["Decision", (d) => d.decision + " (" + d.rule + ")"],
        ["At", (d) => fmtTime(d.at)],
      ],
      decisions,
      "No entities merged yet."));
}

function documentTable(ns, docs) {
  return table(
    [
      ["Document", (d) => h("a", { href: docHref(ns, d.id) }, d.title || d.id)],
      ["Status", (d) => statusTag(d.status)],
      ["Passages", (d) => d.present + " / " + d.passages],
      ["Version", (d) => d.version],
      ["Updated", (d) => fmtTime(d.updated_at)],
    ],
    docs,
    "No documents.");
}

async function documentsPage(nav, ns, params) {
  setCrumbs([["Namespaces", "#/"], [ns, nsHref(ns)], ["Documents"]]);
  const status = params.get("status") || "";
  const cursor = params.get("cursor");
  const q = new URLSearchParams({ limit: "50" });
  if (status) q.set("status", status);
  if (cursor) q.set("cursor", cursor);
  const page = await api("GET", nsPath(ns) + "/documents?" + q.toString());
  const filter = h("select", {
    "aria-label": "Status",
    onchange: (ev) => { location.hash = nsHref(ns) + "/documents" + (ev.target.value ? "?status=" + enc(ev.target.value) : ""); },
  }, ["", "pending", "reading", "verified", "archived"].map((st) => h("option", { value: st, selected: st === status }, st || "any status")));
  show(nav,
    h("h1", {}, "Documents"),
    h("p", {}, filter),
    documentTable(ns, page.documents),
    h("div", { class: "pager" }, page.next_cursor
      ? h("a", { href: nsHref(ns) + "/documents?" + new URLSearchParams({ ...(status ? { status } : {}), cursor: page.next_cursor }).toString() }, "Next page →")
      : h("span", { class: "muted" }, "End of the list.")));
}

async function searchPage(nav, ns, params) {
  await loadModes();
  const query = params.get("q") || "";
  const mode = params.get("mode") || "hybrid";
  const topK = Math.min(100, Math.max(1, parseInt(params.get("k") || "5", 10) || 5));
  setCrumbs([["Namespaces", "#/"], [ns, nsHref(ns)], ["Search"]]);
  show(nav, h("h1", {}, "Search"), searchForm(ns, query, mode, topK), h("p", { class: "muted" }, "Searching…"));
  let r;
  try {
    r = await api("POST", nsPath(ns) + "/retrieve", { query, mode, top_k: topK });
  } catch (e) {
    show(nav, h("h1", {}, "Search"), searchForm(ns, query, mode, topK), failure(e));
    return;
  }
  show(nav,
    h("h1", {}, "Search"),
    searchForm(ns, query, mode, topK),
    h("p", { class: "muted" }, r.results.length + " passages by " + r.mode + " in " + fmtNum(r.took_ms) + " ms, memory version " + r.watermark.version + "."),
    h("div", { id: "results" }, r.results.length ? r.results.map((p) => resultCard(ns, p)) : h("p", { class: "muted" }, "Nothing found.")),
    h("h2", {}, "How " + r.mode + " found them"),
    explanation(ns, r.explanation || {}));
}

function resultCard(ns, p) {
  return h("article", { class: "result" },
    h("div", { class: "meta" }, "#" + p.rank + " · score " + fmtNum(p.score) + " · ",
      h("a", { href: docHref(ns, p.document_id) }, p.title || p.document_id),
      p.headings && p.headings.length ? " › " + p.headings.join(" › ") : "",
      " · characters " + p.start + "–" + p.end + " · passage " + p.passage_id),
    p.memory ? h("div", { class: "memory" }, h("b", {}, "Memory: "), p.memory) : null,
    h("div", { class: "passage-text" }, p.text));
}

// The explanation is each mode's own structure (seed entities, facts, activation, rounds…): shown as it is, with
// entity names made into links.
function explanation(ns, value) {
  const keys = Object.keys(value);
  if (!keys.length) return h("p", { class: "muted" }, "This mode gives no explanation.");
  return h("dl", { class: "explanation" }, keys.map((k) => [h("dt", {}, k.replaceAll("_", " ")), h("dd", {}, explainValue(ns, value[k], 0))]));
}

function explainValue(ns, v, depth) {
  if (v === null || v === undefined) return "—";
  if (Array.isArray(v)) {
    if (!v.length) return h("span", { class: "muted" }, "none");
    if (v.every((x) => x !== null && typeof x === "object" && !Array.isArray(x))) {
      const cols = [...new Set(v.flatMap((x) => Object.keys(x)))];
      return table(cols.map((c) => [c.replaceAll("_", " "), (row) => explainCell(ns, c, row[c], depth + 1)]), v.slice(0, 50));
    }
    return h("span", { class: "tags" }, v.slice(0, 100).map((x) => h("span", {}, typeof x === "object" ? JSON.stringify(x) : fmtNum(x))));
  }
  if (typeof v === "object") {
    if (depth > 3) return JSON.stringify(v);
    return h("dl", {}, Object.entries(v).map(([k, x]) => [h("dt", {}, k.replaceAll("_", " ")), h("dd", {}, explainValue(ns, x, depth + 1))]));
  }
  return fmtNum(v);
}

function explainCell(ns, column, v, depth) {
  if ((column === "entity" || column === "head" || column === "tail") && typeof v === "string") return entityLink(ns, v);
  if (column === "passage_id" && typeof v === "string") return h("code", {}, v);
  return explainValue(ns, v, depth);
}

// An entity known by name: a link that finds it (a name can be several entities; the first is opened).
function entityLink(ns, name) {
  return h("a", {
    href: "#",
    class: "entity-link",
    onclick: async (ev) => {
      ev.preventDefault();
      try {
        const found = await api("GET", nsPath(ns) + "/entities?name=" + enc(name));
        if (found.entities.length) location.hash = entityHref(ns, found.entities[0].id);
        else statusLine.textContent = "No entity named " + name + " in memory now.";
      } catch (e) {
        statusLine.textContent = e.message;
      }
    },
  }, name);
}

async function entityPage(nav, ns, id) {
  const e = await api("GET", nsPath(ns) + "/entities/" + enc(id));
  if (stale(nav)) return;
  const own = ownNames(e);
  setCrumbs([["Namespaces", "#/"], [ns, nsHref(ns)], ["Entity"], [e.name]]);
  const message = h("div", { id: "command-result" });
  const reason = h("input", { type: "text", id: "reason", maxlength: 1000, placeholder: "Reason, kept with the decision", "aria-label": "Reason" });
  show(nav,
    h("h1", {}, e.name, " ", h("span", { class: "status" }, e.type)),
    e.description ? h("p", {}, e.description) : null,
    e.aliases.length ? h("p", { class: "tags" }, "Also: ", e.aliases.map((a) => h("span", {}, a))) : null,
    h("div", { class: "cards" }, [["mentions", e.mentions], ["passages", e.passage_count], ["facts", e.fact_count], ["surfaces", e.surfaces.length]]
      .map(([label, n]) => h("div", { class: "card" }, h("b", {}, fmtNum(n)), label))),
    h("h2", {}, "Neighbourhood"),
    neighbourhood(ns, e),
    h("h2", {}, "Facts"),
    table(
      [
        ["Head", (f) => (own.has(String(f.head).toLowerCase()) ? f.head : entityLink(ns, f.head))],
        ["Relation", (f) => f.relation],
        ["Tail", (f) => (own.has(String(f.tail).toLowerCase()) ? f.tail : entityLink(ns, f.tail))],
        ["Confidence", (f) => fmtNum(f.confidence)],
        ["Where", (f) => h("a", { href: docHref(ns, f.document_id) }, f.document_id)],
      ],
      e.facts,
      "No facts about this entity."),
    h("h2", {}, "Surfaces"),
    table(
      [
        ["Name", (x) => x.name],
        ["Type", (x) => x.type],
        ["Description", (x) => x.description || ""],
        ["Mentions", (x) => x.mentions],
        ["", (x) => (e.surfaces.length > 1 && x.id !== e.id
          ? h("button", { type: "button", class: "split", onclick: () => command(ns, "split", e.id, x.id, message) }, "Split from " + e.name)
          : "")],
      ],
      e.surfaces),
    h("h2", {}, "Passages"),
    table(
      [
        ["Document", (m) => h("a", { href: docHref(ns, m.document_id) }, m.document_id)],
        ["As", (m) => m.form],
        ["Mentions", (m) => m.mentions],
        ["By", (m) => m.extractor],
        ["At", (m) => fmtTime(m.at)],
      ],
      e.passages),
    h("h2", {}, "Resolution decisions"),
    h("p", { class: "muted" }, "Operator commands (admin keys) override the rules; a reason is kept with them. ", reason),
    message,
    table(
      [
        ["Entity", (d) => h("a", { href: entityHref(ns, d.entity_id) }, d.entity_name)],
        ["Other", (d) => h("a", { href: entityHref(ns, d.other_id) }, d.other_name)],
        ["Decision", (d) => d.decision],
        ["Rule", (d) => d.rule],
        ["Score", (d) => h("span", { title: features(d.features) }, typeof d.score === "number" ? d.score.toFixed(3) : "")],
        ["Evidence", (d) => (d.evidence || []).join("; ")],
        ["Operator", (d) => [
          h("button", { type: "button", class: "merge", onclick: () => command(ns, "merge", d.entity_id, d.other_id, message) }, "Merge"), " ",
          h("button", { type: "button", class: "split", onclick: () => command(ns, "split", d.entity_id, d.other_id, message) }, "Split"), " ",
          h("button", { type: "button", class: "clear", onclick: () => command(ns, "clear", d.entity_id, d.other_id, message) }, "Clear")]],
      ],
      e.decisions,
      "No decisions touch this entity."));
}

/** The features a merge score and its constraints read, those that are not zero, as "name value" lines (shown on hover). */
function features(f) {
  return Object.entries(f || {})
    .filter(([, v]) => v !== 0)
    .map(([k, v]) => k + " " + (Math.round(v * 1000) / 1000))
    .join("\n");
}

async function command(ns, op, entityId, otherId, message) {
  const reasonInput = document.getElementById("reason");
  const reason = reasonInput ? reasonInput.value : "";
  try {
    await api("POST", nsPath(ns) + "/merges", { op, entity_id: entityId, other_id: otherId, reason });
    message.replaceChildren(h("p", { class: "notice" }, "Accepted: memory applies the " + op + " in a moment; reload to see it."));
  } catch (e) {
    message.replaceChildren(e instanceof ApiError && e.status === 403 && e.code === "forbidden"
      ? h("p", { class: "error", role: "alert" }, "Operator commands need an admin key: " + e.message)
      : failure(e));
  }
}

// The entity and the entities its facts connect it to, on a circle around it; a click opens a neighbour.
// The names an entity goes by (its name, aliases and surfaces), compared without case: facts carry the
// extractor's wording.
function ownNames(e) {
  return new Set([e.name, ...(e.aliases || []), ...(e.surfaces || []).map((x) => x.name)].map((n) => String(n).toLowerCase()));
}

function neighbourhood(ns, e) {
  const own = ownNames(e);
  const edges = new Map();
  for (const f of e.facts) {
    const other = own.has(String(f.head).toLowerCase()) ? f.tail : f.head;
    if (own.has(String(other).toLowerCase())) continue;
    if (!edges.has(other)) edges.set(other, new Set());
    edges.get(other).add(f.relation);
  }
  if (!edges.size) return h("p", { class: "muted" }, "No facts connect this entity to others yet.");
  const W = 760, H = 440, cx = W / 2, cy = H / 2, R = 165;
  const svg = s("svg", { class: "graph", viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "Neighbourhood of " + e.name });
  const names = [...edges.keys()].slice(0, 24);
  names.forEach((name, i) => {
    const a = (2 * Math.PI * i) / names.length - Math.PI / 2;
    const x = cx + R * Math.cos(a), y = cy + R * Math.sin(a);
    svg.appendChild(s("line", { x1: cx, y1: cy, x2: x, y2: y }));
    svg.appendChild(s("text", { x: (cx + x) / 2, y: (cy + y) / 2 - 3, "text-anchor": "middle", class: "relation" },
      [...edges.get(name)].slice(0, 2).join(", ")));
    const node = s("circle", { cx: x, cy: y, r: 9, class: "neighbour", "data-name": name });
    node.appendChild(s("title", {}, name));
    node.addEventListener("click", () => entityLink(ns, name).click());
    svg.appendChild(node);
    svg.appendChild(s("text", { x, y: y + (Math.sin(a) >= 0 ? 22 : -14), "text-anchor": "middle" }, name.length > 28 ? name.slice(0, 27) + "…" : name));
  });
  svg.appendChild(s("circle", { cx, cy, r: 14, class: "center" }));
  svg.appendChild(s("text", { x: cx, y: cy + 30, "text-anchor": "middle", "font-weight": "700" }, e.name));
  const more = edges.size > names.length ? h("p", { class: "muted" }, (edges.size - names.length) + " more neighbours in the facts below.") : null;
  return h("div", {}, svg, more);
}

async function documentPage(nav, ns, id) {
  setCrumbs([["Namespaces", "#/"], [ns, nsHref(ns)], ["Document"], [id]]);
  const d = await api("GET", nsPath(ns) + "/documents/" + enc(id));
  let gist = null;
  try {
    gist = await api("GET", nsPath(ns) + "/documents/" + enc(id) + "/gist");
  } catch (e) {
    gist = null;
  }
  show(nav,
    h("h1", {}, d.title || d.id, " ", statusTag(d.status)),
    h("p", { class: "muted" }, "Document " + d.id + " · version " + d.version + (d.source ? " · " + d.source : "") + " · updated " + fmtTime(d.updated_at)),
    d.metadata && Object.keys(d.metadata).length
      ? h("p", { class: "tags" }, Object.entries(d.metadata).map(([k, v]) => h("span", {}, k + ": " + (typeof v === "object" ? JSON.stringify(v) : v))))
      : null,
    h("h2", {}, "Gist"),
    gist && gist.gist.length ? h("ul", { id: "gist" }, gist.gist.map((g) => h("li", {}, g))) : h("p", { class: "muted" }, "No gist: the document has no passages in memory."),
    h("h2", {}, "Passages"),
    d.passages.length
      ? d.passages.map((p) => h("article", { class: "result" },
        h("div", { class: "meta" }, "Passage " + (p.ordinal ?? "?") + " · " + p.passage_id + (p.in_memory ? "" : " · not in memory yet"),
          p.headings && p.headings.length ? " · " + p.headings.join(" › ") : ""),
        p.memory ? h("div", { class: "memory" }, h("b", {}, "Memory: "), p.memory) : null,
        p.text ? h("div", { class: "passage-text" }, p.text) : null,
        p.entities && p.entities.length ? h("p", { class: "tags" }, "Entities: ", p.entities.map((x) => h("span", {}, entityLink(ns, x.name)))) : null,
        p.facts && p.facts.length ? h("ul", {}, p.facts.map((f) => h("li", {}, f.head + " — " + f.relation + " → " + f.tail))) : null))
      : h("p", { class: "muted" }, "No passages."));
}

async function themesPage(nav, ns) {
  setCrumbs([["Namespaces", "#/"], [ns, nsHref(ns)], ["Themes"]]);
  const t = await api("GET", nsPath(ns) + "/themes");
  show(nav,
    h("h1", {}, "Themes"),
    h("p", { class: "muted" }, t.themes.length + " themes over " + t.passages + " passages" + (t.computed_at ? ", computed " + fmtTime(t.computed_at) : "") + "."),
    t.themes.map((th) => h("article", { class: "result" },
      h("div", { class: "meta" }, "Theme " + th.rank + " · eigenvalue " + fmtNum(th.eigenvalue) + " · " + th.passage_ids.length + " passages · " + th.summary_kind),
      h("p", {}, th.summary),
      th.questions && th.questions.length ? h("ul", {}, th.questions.map((q) => h("li", {}, q))) : null)));
}

// ---- routing ---------------------------------------------------------------------------------------------------

async function route() {
  const nav = ++navigation;
  document.getElementById("key-forget").hidden = !sessionStorage.getItem(KEY_STORE);
  try {
    const hash = location.hash.replace(/^#/, "") || "/";
    const [path, query] = hash.split("?");
    const params = new URLSearchParams(query || "");
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    if (!parts.length) await home(nav);
    else if (parts[0] === "ns" && parts.length === 2) await namespacePage(nav, parts[1]);
    else if (parts[0] === "ns" && parts[2] === "search") await searchPage(nav, parts[1], params);
    else if (parts[0] === "ns" && parts[2] === "documents") await documentsPage(nav, parts[1], params);
    else if (parts[0] === "ns" && parts[2] === "doc" && parts.length === 4) await documentPage(nav, parts[1], parts[3]);
    else if (parts[0] === "ns" && parts[2] === "entity" && parts.length === 4) await entityPage(nav, parts[1], parts[3]);
    else if (parts[0] === "ns" && parts[2] === "themes") await themesPage(nav, parts[1]);
    else show(nav, h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Back to the namespaces")));
  } catch (e) {
    show(nav, e instanceof URIError ? h("p", { class: "error", role: "alert" }, "This address is not one the explorer made.") : failure(e));
  }
}

// Going to the address already shown (the same search again) fires no hashchange: route anyway.
function go(href) {
  if (location.hash === href) route();
  else location.hash = href;
}

window.addEventListener("hashchange", route);
route();
