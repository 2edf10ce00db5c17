// assay view: the pages over the JSON API (docs/viewer.md). Plain script, no build step, no
// network beyond this server. Every value from the API goes into the page as text (textContent),
// never as markup: outputs and reasons are model and user text.
"use strict";
(() => {
const ROW = 32;            // the virtualised lists' row height (px), as in app.css
const OVERSCAN = 12;       // rows drawn beyond the window, so fast scrolling shows no gap
const LIVE_POLL_MS = 1000;
const STATUSES = ["pass", "fail", "error", "needs-judge", "no-output"];
const LABEL = {"pass": "PASS", "fail": "FAIL", "needs-judge": "NEEDS-JUDGE",
  "no-output": "NO-OUTPUT", "error": "ERROR", "answered": "ANSWERED"};
// What a live run counts: its tasks (bench), or its model calls (eval, gate), the judge's apart.
const UNITS = {"tasks": "tasks", "output": "calls", "judge": "judge calls"};
const CHANGES = ["regressed", "improved", "added", "removed", "same"];
const app = document.getElementById("app");
const cache = {runs: null, run: new Map()};
const memory = {runHash: new Map(), runOrder: null, compareHash: null, lastGolden: null};
let view = null;           // the page shown: {keys: {...}, dispose(), back}
let liveTimer = null;

// ------------------------------------------------------------------------------ small helpers
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
function add(parent, ...children) {
  children.forEach((c) => { if (c !== null && c !== undefined) parent.append(c); });
  return parent;
}
function link(href, text, cls) { const a = el("a", cls, text); a.href = href; return a; }
const isNum = (v) => typeof v === "number" && isFinite(v);
const pct = (v) => isNum(v) ? (v * 100).toFixed(1) + "%" : "n/a";
const num = (v) => isNum(v) ? v.toFixed(3) : "n/a";
const signed = (v) => isNum(v) ? (v > 0 ? "+" : "") + v.toFixed(3) : "";
const show = (v) => typeof v === "string" ? v : JSON.stringify(v, null, 2);
const brief = (v) => { const s = JSON.stringify(v); return s && s.length <= 100 ? s : show(v); };
const norm = (s) => String(s || "missing").replace(/_/g, "-");
const enc = encodeURIComponent;
function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (isNaN(d)) return String(iso);
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
function chip(status, score) {
  const s = norm(status);
  const c = el("span", "chip st-" + s, LABEL[s] || s.toUpperCase());
  if (isNum(score)) c.textContent += " " + num(score);
  return c;
}
function card(label, value, cls) {
  return add(el("div", "card" + (cls ? " " + cls : "")),
    el("div", "card-label", label), el("div", "card-value", value));
}
function kv(pairs) {
  const t = el("table", "kv");
  pairs.forEach(([k, v]) => {
    if (v === null || v === undefined || v === "") return;
    const tr = add(el("tr"), el("th", null, k));
    const td = el("td");
    if (v instanceof Node) td.append(v); else td.textContent = typeof v === "string" ? v : brief(v);
    t.append(add(tr, td));
  });
  return t;
}
function section(title, parent) {
  const s = el("section");
  if (title) s.append(el("h2", null, title));
  (parent || app).append(s);
  return s;
}
function preOr(parent, value, missing) {
  if (value === null || value === undefined) parent.append(el("p", "muted", missing));
  else parent.append(el("pre", null, show(value)));
}
function gitText(g) {
  if (!g) return "";
  return [g.branch, g.commit ? String(g.commit).slice(0, 10) : null].filter(Boolean).join(" @ ");
}
function selectionText(sel) {
  if (!sel || typeof sel !== "object") return sel ? String(sel) : "";
  const parts = [];
  if (sel.filter && sel.filter.length) parts.push("filter " + [].concat(sel.filter).join(", "));
  if (sel.shard) parts.push("shard " + sel.shard);
  return parts.join(" · ");
}
function rateCell(v) {
  const d = el("div", "rate");
  const bar = el("i"); bar.style.width = (isNum(v) ? Math.round(v * 50) : 0) + "px";
  return add(d, bar, el("span", "num", pct(v)));
}

// Parse "#/a/b?x=1" into {parts: ["a","b"], query: URLSearchParams}; parts are decoded.
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const q = raw.indexOf("?");
  const path = q < 0 ? raw : raw.slice(0, q);
  const parts = path.split("/").filter((p) => p !== "").map((p) => {
    try { return decodeURIComponent(p); } catch (e) { return p; }
  });
  return {parts, query: new URLSearchParams(q < 0 ? "" : raw.slice(q + 1))};
}
// Keep a page's filters in its address (deep links) without re-rendering the page.
function setQuery(base, params) {
  const q = new URLSearchParams();
  Object.entries(params).forEach(([k, v]) => { if (v) q.set(k, v); });
  const s = q.toString();
  history.replaceState(null, "", base + (s ? "?" + s : ""));
  return location.hash;
}
const runHref = (id) => "#/run/" + enc(id);
const goldenHref = (runId, gid, cand) =>
  `#/run/${enc(runId)}/golden/${enc(gid)}` + (cand ? "?candidate=" + enc(cand) : "");

async function api(path) {
  const res = await fetch(path, {headers: {"Accept": "application/json"}});
  let body = null;
  try { body = await res.json(); } catch (e) { body = null; }
  if (!res.ok) throw new Error((body && body.error) || `${res.status} ${res.statusText}`);
  if (body === null) throw new Error(`${path}: not JSON`);
  return body;
}
function fail(err) {
  app.replaceChildren(add(el("section", "problems"),
    el("p", "error", String(err && err.message || err)), link("#/runs", "back to the runs")));
  document.body.dataset.ready = "error";
}

// ----------------------------------------------------------------------- the virtualised list
// Only the rows in view (plus OVERSCAN) exist in the page; j/k move `sel`, Enter opens it.
function vlist(parent, cls, items, renderRow, open) {
  const box = el("div", "vlist");
  parent.append(box);
  const st = {items, sel: items.length ? 0 : -1, drawn: [-1, -1]};
  function top() { return box.getBoundingClientRect().top + window.scrollY; }
  function draw(force) {
    box.style.height = st.items.length * ROW + "px";
    const t = top();
    const first = Math.max(0, Math.floor((window.scrollY - t) / ROW) - OVERSCAN);
    const last = Math.min(st.items.length,
      Math.ceil((window.scrollY + window.innerHeight - t) / ROW) + OVERSCAN);
    if (!force && first === st.drawn[0] && last === st.drawn[1]) return;
    st.drawn = [first, last];
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) {
      const r = renderRow(st.items[i], i);
      r.className = "vrow " + cls + (i === st.sel ? " sel" : "");
      r.style.top = i * ROW + "px";
      r.dataset.index = i;
      frag.append(r);
    }
    box.replaceChildren(frag);
  }
  box.addEventListener("click", (e) => {
    const r = e.target.closest(".vrow");
    if (!r || e.target.closest("input,a,button")) return;
    st.sel = Number(r.dataset.index);
    open(st.items[st.sel], st.sel);
  });
  function move(d) {
    if (!st.items.length) return;
    st.sel = Math.max(0, Math.min(st.items.length - 1, st.sel + d));
    const y = top() + st.sel * ROW;
    if (y < window.scrollY) window.scrollTo(0, y - ROW);
    else if (y + ROW > window.scrollY + window.innerHeight) {
      window.scrollTo(0, y + 2 * ROW - window.innerHeight);
    }
    draw(true);
  }
  const onScroll = () => draw(false);
  window.addEventListener("scroll", onScroll, {passive: true});
  window.addEventListener("resize", onScroll);
  return {
    st,
    draw,
    set(itemsNow, sel) { st.items = itemsNow; st.sel = itemsNow.length ? (sel || 0) : -1; draw(true); },
    move,
    open() { if (st.sel >= 0) open(st.items[st.sel], st.sel); },
    dispose() {
      window.removeEventListener("scroll", onScroll);
      window.removeEventListener("resize", onScroll);
    },
  };
}
function header(cls, names, numeric) {
  const h = el("div", "vhead " + cls);
  names.forEach((n, i) => h.append(el("span", numeric && numeric.includes(i) ? "num" : null, n)));
  return h;
}
function selectBox(label, values, current, onChange) {
  const s = el("select");
  s.setAttribute("aria-label", label);
  add(s, new Option(label + ": all", ""));
  values.forEach((v) => s.append(new Option(v, v)));
  s.value = current || "";
  s.addEventListener("change", () => onChange(s.value));
  return s;
}
function searchBox(placeholder, value, onInput) {
  const i = el("input");
  i.type = "search"; i.placeholder = placeholder; i.value = value || ""; i.id = "search";
  i.setAttribute("aria-label", placeholder);
  i.addEventListener("input", () => onInput(i.value));
  return i;
}
const uniq = (xs) => [...new Set(xs.filter((x) => x !== null && x !== undefined && x !== ""))].sort();

// ------------------------------------------------------------------------------ the runs page
function chart(parent, runs) {
  const byKind = {};
  const ordered = runs.slice().sort((a, b) => String(a.started_at).localeCompare(String(b.started_at)));
  ordered.forEach((r, i) => { (byKind[r.kind] = byKind[r.kind] || []).push([i, r]); });
  const W = 1000, H = 120, n = Math.max(1, ordered.length - 1);
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "pass rate (solid) and mean score (dashed) over time");
  [0, 0.5, 1].forEach((y) => {
    const l = document.createElementNS(NS, "line");
    l.setAttribute("x1", 0); l.setAttribute("x2", W);
    l.setAttribute("y1", 4 + (1 - y) * (H - 8)); l.setAttribute("y2", 4 + (1 - y) * (H - 8));
    l.setAttribute("class", "grid");
    svg.append(l);
  });
  const colour = {gate: "var(--accent)", eval: "var(--pass)", bench: "var(--err)"};
  const legend = el("div", "legend");
  Object.entries(byKind).forEach(([kind, pts]) => {
    [["pass_rate", ""], ["mean_score", "5 4"]].forEach(([key, dash]) => {
      const xy = pts.filter(([, r]) => isNum(r[key]))
        .map(([i, r]) => `${(i / n) * W},${4 + (1 - r[key]) * (H - 8)}`);
      if (!xy.length) return;
      if (xy.length === 1) xy.push(xy[0].replace(/^[^,]+/, (x) => String(Number(x) + 4)));
      const p = document.createElementNS(NS, "polyline");
      p.setAttribute("points", xy.join(" "));
      p.setAttribute("fill", "none");
      p.setAttribute("stroke", colour[kind] || "var(--muted)");
      p.setAttribute("stroke-width", "2");
      p.setAttribute("vector-effect", "non-scaling-stroke");
      if (dash) p.setAttribute("stroke-dasharray", dash);
      svg.append(p);
    });
    const key = el("span");
    const sw = el("i"); sw.style.background = colour[kind] || "var(--muted)";
    legend.append(add(key, sw, `${kind}: pass rate (solid), mean score (dashed)`));
  });
  const box = add(el("div", "chart-box"), svg);
  [["100%", 0], ["50%", 50], ["0%", 100]].forEach(([text, at]) => {
    const tick = el("span", "tick", text);
    tick.style.top = `calc(${at}% - ${at / 100 * 14}px)`;
    box.append(tick);
  });
  add(parent, box, legend);
}

function runMatches(r, f) {
  if (f.kind && r.kind !== f.kind) return false;
  if (f.mode && r.mode !== f.mode) return false;
  if (f.branch && (!r.git || r.git.branch !== f.branch)) return false;
  const day = String(r.started_at || "").slice(0, 10);
  if (f.since && day < f.since) return false;
  if (f.until && day > f.until) return false;
  if (f.q) {
    const hay = [r.run_id, r.suite, selectionText(r.selection), r.mode, r.kind, gitText(r.git),
      ...(r.candidates || [])].join(" ").toLowerCase();
    if (!hay.includes(f.q.toLowerCase())) return false;
  }
  return true;
}

function runRow(r, picked, onPick) {
  const row = el("div");
  const box = el("input");
  box.type = "checkbox"; box.checked = picked.has(r.run_id);
  box.setAttribute("aria-label", "pick " + r.run_id + " to compare");
  box.addEventListener("change", () => onPick(r.run_id, box.checked));
  const t = r.totals || {};
  const kind = el("span");
  kind.append(el("span", "chip k-" + r.kind, r.kind));
  const ex = el("span", "num", r.exit_code === null || r.exit_code === undefined ? "" : r.exit_code);
  if (r.exit_code === 2) ex.classList.add("error");
  return add(row, box, el("span", "mono", when(r.started_at)), kind, el("span", null, r.mode),
    el("span", null, [r.suite, selectionText(r.selection)].filter(Boolean).join(" · ")), el("span", null, (r.candidates || []).join(", ")),
    el("span", "num", t.results), rateCell(r.pass_rate), el("span", "num", num(r.mean_score)),
    ex, el("span", "mono", gitText(r.git)));
}

async function pageRuns(query) {
  const data = cache.runs = await api("/api/runs");
  const runs = data.runs || [];
  const f = {kind: query.get("kind"), mode: query.get("mode"), branch: query.get("branch"),
    since: query.get("since"), until: query.get("until"), q: query.get("q")};
  const picked = new Set((query.get("pick") || "").split(",").filter(Boolean));
  app.replaceChildren(el("h1", null, "Runs"));
  if ((data.problems || []).length) {
    const p = add(el("section", "problems"), el("h2", null, "Records that could not be read"));
    const ul = el("ul", "plain");
    data.problems.forEach((x) => ul.append(el("li", null, `${x.run_id}: ${x.error}`)));
    app.append(add(p, ul));
  }
  if (!runs.length) {
    section("No saved runs").append(el("p", "muted",
      "Run assay gate, eval or bench in this project: each run is saved under .assay/runs/."));
    document.body.dataset.ready = "runs";
    return {};
  }
  const hist = section("Pass rate and score over time");
  const bar = el("div", "bar");
  const count = el("span", "muted");
  const compare = el("button", null, "Compare picked (0/2)");
  compare.type = "button"; compare.id = "compare"; compare.disabled = true;
  const list = section(null);
  list.append(header("g-runs", ["", "started", "kind", "mode", "suite", "candidates", "results",
    "pass rate", "score", "exit", "git"], [6, 8, 9]));
  let shown = [];
  const v = vlist(list, "g-runs", [], (r) => runRow(r, picked, pick), (r) => { location.hash = runHref(r.run_id); });
  function refresh() {
    shown = runs.filter((r) => runMatches(r, f));
    setQuery("#/runs", {...f, pick: [...picked].join(",")});
    count.textContent = `${shown.length} of ${runs.length} runs`;
    compare.textContent = `Compare picked (${picked.size}/2)`;
    compare.disabled = picked.size !== 2;
    hist.replaceChildren(el("h2", null, "Pass rate and score over time"));
    chart(hist, shown);
    v.set(shown, Math.min(Math.max(v.st.sel, 0), Math.max(0, shown.length - 1)));
  }
  function pick(id, on) {
    if (on) picked.add(id); else picked.delete(id);
    while (picked.size > 2) picked.delete(picked.values().next().value);
    refresh();
  }
  compare.addEventListener("click", () => {
    // Older run on the left (before), newer on the right (after).
    const [a, b] = [...picked].sort((x, y) => {
      const rx = runs.find((r) => r.run_id === x), ry = runs.find((r) => r.run_id === y);
      return String(rx && rx.started_at).localeCompare(String(ry && ry.started_at));
    });
    location.hash = `#/compare/${enc(a)}/${enc(b)}`;
  });
  const set = (key) => (value) => { f[key] = value; refresh(); };
  const date = (key, label) => {
    const i = el("input"); i.type = "date"; i.value = f[key] || "";
    i.setAttribute("aria-label", label); i.title = label;
    i.addEventListener("change", () => set(key)(i.value));
    return i;
  };
  add(bar, searchBox("search runs (id, suite, candidate, commit)", f.q, set("q")),
    selectBox("kind", uniq(runs.map((r) => r.kind)), f.kind, set("kind")),
    selectBox("mode", uniq(runs.map((r) => r.mode)), f.mode, set("mode")),
    selectBox("branch", uniq(runs.map((r) => r.git && r.git.branch)), f.branch, set("branch")),
    date("since", "from day"), date("until", "to day"), compare, count);
  app.insertBefore(bar, hist);
  refresh();
  document.body.dataset.ready = "runs";
  return {list: v, dispose: () => v.dispose()};
}

// ------------------------------------------------------------------------------- a run's page
function resultMatches(r, f) {
  if (f.status === "failing") { if (norm(r.status) === "pass") return false; }
  else if (f.status && norm(r.status) !== f.status) return false;
  if (f.candidate && r.candidate !== f.candidate) return false;
  if (f.tier && r.tier !== f.tier) return false;
  if (f.q) {
    const hay = `${r.id} ${r.title || ""} ${r.candidate || ""} ${r.decided_by || ""} ${r.failure_category || ""}`;
    if (!hay.toLowerCase().includes(f.q.toLowerCase())) return false;
  }
  return true;
}
function resultRow(r) {
  const row = el("div");
  const st = el("span"); st.append(chip(r.status));
  return add(row, st, el("span", "id", r.id), el("span", null, r.candidate),
    el("span", null, r.tier), el("span", "num", num(r.score)), el("span", "muted", r.decided_by),
    el("span", "muted", r.title || r.failure_category || ""));
}
function summaryCards(run) {
  const t = run.totals || {};
  const c = el("div", "cards");
  add(c, card("results", t.results ?? ""), card("pass", t.pass ?? 0, "ok"),
    card("fail", t.fail ?? 0, t.fail ? "bad" : ""), card("error", t.error ?? 0, t.error ? "bad" : ""),
    card("needs judge", t.needs_judge ?? 0), card("no output", t.no_output ?? 0),
    card("pass rate", pct(run.pass_rate)), card("mean score", num(run.mean_score)),
    card("exit", run.exit_code ?? "", run.exit_code === 2 ? "bad" : ""));
  return c;
}
function regressionText(g) {
  if (typeof g === "string") return g;
  const words = g.why || g.words || g.summary || g.reason || g.message;
  const who = [g.id || g.golden, g.candidate].filter(Boolean).join(" · ");
  return (who ? who + ": " : "") + (words || brief(g));
}
function runTop(d, runId) {
  const run = d.run || {};
  app.replaceChildren(add(el("div", "crumbs"), link("#/runs", "Runs"), " / ",
    el("span", "mono", runId)));
  const h = el("h1");
  add(h, el("span", "chip k-" + run.kind, run.kind), " ", `${run.mode || ""} run · ${when(run.started_at)}`);
  app.append(h);
  const s = section(null);
  add(s, summaryCards(run), kv([["suite", run.suite], ["selection", selectionText(run.selection)], ["gate", run.gate],
    ["candidates", (run.candidates || []).join(", ")], ["git", gitText(run.git)],
    ["run id", run.run_id]]));
  if ((d.regressions || []).length) {
    const r = section("Regressions");
    r.id = "regressions";
    const ul = el("ul", "plain");
    d.regressions.forEach((g) => ul.append(el("li", null, regressionText(g))));
    r.append(ul);
  }
  if ((d.notes || []).length) {
    const ul = el("ul", "plain");
    d.notes.forEach((n) => ul.append(el("li", null, typeof n === "string" ? n : brief(n))));
    section("Notes").append(ul);
  }
  if ((d.undecided || []).length) {
    const ul = el("ul", "plain");
    d.undecided.forEach((n) => ul.append(el("li", null, typeof n === "string" ? n : brief(n))));
    section("Undecided").append(ul);
  }
  if (d.attestation) section("Attestation").append(attestationView(d.attestation));
  const links = add(el("p", "compare-links"), link(`#/compare/${enc(runId)}/baseline`, "compare with the baseline"));
  s.append(links);
  // The run before (for a link) comes from the run list: read after this page is drawn, so the
  // server answers the run itself first.
  const withBefore = () => {
    const older = (cache.runs.runs || []).find((r) => r.run_id !== runId && r.kind === run.kind &&
      String(r.started_at) < String(run.started_at));
    if (older) links.prepend(link(`#/compare/${enc(older.run_id)}/${enc(runId)}`, "compare with the run before"), " · ");
  };
  if (cache.runs) withBefore();
  else setTimeout(() => api("/api/runs").then((x) => { cache.runs = x; if (links.isConnected) withBefore(); }, () => null), 0);
}

async function loadRun(runId) {
  if (!cache.run.has(runId)) cache.run.set(runId, await api("/api/runs/" + enc(runId)));
  return cache.run.get(runId);
}

async function pageRun(runId, query) {
  performance.clearMarks(); performance.clearMeasures();
  performance.mark("run:start");
  const d = await loadRun(runId);
  performance.mark("run:data");
  const results = d.results || [];
  const f = {status: query.get("status"), candidate: query.get("candidate"),
    tier: query.get("tier"), q: query.get("q")};
  runTop(d, runId);
  const list = section(null);
  list.id = "results";
  const head = el("h2", null, "Results");
  const bar = el("div", "bar");
  const count = el("span", "muted");
  const counts = {};
  results.forEach((r) => { const s = norm(r.status); counts[s] = (counts[s] || 0) + 1; });
  const buttons = [];
  const statusButton = (value, label) => {
    const b = el("button", null, label);
    b.type = "button"; b.dataset.status = value;
    b.addEventListener("click", () => { f.status = value; refresh(); });
    buttons.push(b);
    return b;
  };
  bar.append(statusButton("", `all ${results.length}`));
  const failing = results.length - (counts.pass || 0);
  if (failing) bar.append(statusButton("failing", `not passing ${failing}`));
  STATUSES.forEach((s) => { if (counts[s]) bar.append(statusButton(s, `${LABEL[s].toLowerCase()} ${counts[s]}`)); });
  add(bar, searchBox("search results (id, title, candidate)", f.q, (q) => { f.q = q; refresh(); }));
  const cands = uniq(results.map((r) => r.candidate));
  if (cands.length > 1) bar.append(selectBox("candidate", cands, f.candidate, (c) => { f.candidate = c; refresh(); }));
  const tiers = uniq(results.map((r) => r.tier));
  if (tiers.length > 1) bar.append(selectBox("tier", tiers, f.tier, (t) => { f.tier = t; refresh(); }));
  bar.append(count);
  add(list, head, bar, header("g-results", ["status", "golden", "candidate", "tier", "score",
    "decided by", "title"], [4]));
  const open = (r) => { location.hash = goldenHref(runId, r.id, r.candidate); };
  const v = vlist(list, "g-results", [], resultRow, open);
  function refresh() {
    const shown = results.filter((r) => resultMatches(r, f));
    buttons.forEach((b) => b.setAttribute("aria-pressed", String((f.status || "") === b.dataset.status)));
    count.textContent = `${shown.length} shown`;
    memory.runHash.set(runId, setQuery(runHref(runId), f));
    memory.runOrder = {runId, items: shown.map((r) => [r.id, r.candidate])};
    const last = memory.lastGolden;
    const at = last && last[0] === runId
      ? shown.findIndex((r) => r.id === last[1] && (!last[2] || r.candidate === last[2])) : -1;
    memory.lastGolden = null;  // once: a later filter starts at the top
    v.set(shown, Math.max(0, at));
    if (at > 0) v.move(0);
  }
  refresh();
  requestAnimationFrame(() => {
    performance.mark("run:rendered");
    performance.measure("run:render", "run:data", "run:rendered");
    performance.measure("run:total", "run:start", "run:rendered");
    document.body.dataset.ready = "run";
  });
  return {list: v, dispose: () => v.dispose(), back: "#/runs"};
}

// ----------------------------------------------------------------------------- a golden's page
// A word diff (longest common subsequence of words, spaces and punctuation). Big texts are not diffed: the
// table would cost len(a) × len(b), so above the cap the two texts are shown side by side only.
const DIFF_CAP = 4e6;
function wordDiff(a, b) {
  // Words, runs of space and single punctuation marks: "users;" and "users" share "users".
  const tokens = (t) => String(t).split(/(\s+|[^\p{L}\p{N}_\s])/u).filter((w) => w !== "");
  const x = tokens(a), y = tokens(b);
  if (x.length * y.length > DIFF_CAP) return null;
  const n = x.length, m = y.length;
  const L = Array.from({length: n + 1}, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    }
  }
  const out = el("pre", "diff");
  // Adjacent tokens of one kind become one element (a deletion reads as one phrase).
  const put = (tag, text) => {
    const last = out.lastChild;
    if (tag && last && last.nodeName === tag.toUpperCase()) last.textContent += text;
    else if (!tag && last && last.nodeType === Node.TEXT_NODE) last.textContent += text;
    else out.append(tag ? el(tag, null, text) : text);
  };
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) { put(null, x[i]); i++; j++; }
    else if (i < n && (j >= m || L[i + 1][j] >= L[i][j + 1])) { put("del", x[i]); i++; }
    else { put("ins", y[j]); j++; }
  }
  return out;
}
function diffSection(parent, before, after, title, legend) {
  if (typeof before !== "string" || typeof after !== "string") return;
  parent.append(el("h3", null, title));
  const d = wordDiff(before, after);
  if (d) add(parent, el("p", "muted", legend), d);
  else parent.append(el("p", "muted", "too long for a word diff: compare the two texts above"));
}
function attestationView(a) {
  const box = el("div");
  const verdict = a.verdict ?? a.status ?? a.ok;
  box.append(kv([["verdict", verdict === true ? "verified" : verdict === false ? "not verified" : verdict],
    ["attestation", a.id], ["sealed", a.sealed_at || a.sealed], ["verified clean", a.clean],
    ["digest", a.digest || a.root]]));
  const reasons = a.reasons || a.attestation_reasons || [];
  if (reasons.length) {
    const ul = el("ul", "plain");
    reasons.forEach((r) => ul.append(el("li", null, typeof r === "string" ? r : brief(r))));
    box.append(ul);
  }
  return box;
}
function journalView(events) {
  const ol = el("ol", "timeline");
  events.forEach((e) => {
    if (typeof e !== "object" || e === null) { ol.append(el("li", null, String(e))); return; }
    const kind = String(e.kind || e.op || e.type || e.event || "event");
    const endpoint = e.endpoint || (e.host ? e.host + (e.port ? ":" + e.port : "") : null);
    const what = e.path || (Array.isArray(e.argv) ? e.argv.join(" ") : null) || e.command ||
      endpoint || e.address || e.target || "";
    const li = el("li", "ev-" + kind.replace(/[^a-z]/gi, "").toLowerCase());
    const at = e.t ?? e.time ?? e.at ?? e.ts ?? (e.index !== undefined ? "#" + e.index : undefined);
    add(li, el("span", "ev-kind", kind), " ", el("span", "mono", what));
    if (at !== undefined && at !== null) li.append(el("span", "muted", "  " + at));
    const extra = Object.fromEntries(Object.entries(e).filter(([k]) =>
      !["kind", "op", "type", "event", "path", "command", "argv", "host", "port", "endpoint", "address", "target", "t", "time", "at", "ts", "index"].includes(k)));
    if (Object.keys(extra).length) li.append(el("div", "muted mono", brief(extra)));
    ol.append(li);
  });
  return ol;
}
function checksView(checks) {
  const ul = el("ul", "checks");
  checks.forEach((c) => {
    // passed null: a check the kept output cannot decide again (the judge's, say); skipped:
    // cheaper asserts decided the golden, so it counts for nothing.
    const known = c.passed === true || c.passed === false;
    const li = el("li", c.passed === true ? "ok" : c.passed === false && !c.skipped ? "bad" : null);
    const mark = c.skipped ? "– skipped" : !known ? "· as the run decided" : c.passed ? "✓ pass" : "✗ fail";
    add(li, el("span", "mark", mark), el("span", "mono", c.op));
    if (c.reason) li.append(el("div", "reason", c.reason));
    else if (c.note) li.append(el("div", "muted", c.note));
    else if (c.passed === false) li.append(el("div", "muted", "its reason is not in the run record (it may quote the expected answer)"));
    if (c.evidence !== undefined && c.evidence !== null) li.append(el("pre", "evidence", brief(c.evidence)));
    ul.append(li);
  });
  return ul;
}

async function pageGolden(runId, goldenId, query) {
  const candidate = query.get("candidate");
  memory.lastGolden = [runId, goldenId, candidate];
  const path = `/api/runs/${enc(runId)}/goldens/${enc(goldenId)}` + (candidate ? "?candidate=" + enc(candidate) : "");
  const [g] = await Promise.all([api(path), loadRun(runId).catch(() => null)]);
  const back = memory.runHash.get(runId) || runHref(runId);
  app.replaceChildren(add(el("div", "crumbs"), link("#/runs", "Runs"), " / ",
    link(back, runId, "mono"), " / ", el("span", "mono", goldenId)));
  const h = add(el("h1"), chip(g.status, g.score), " ", g.id || goldenId);
  app.append(h);
  if (g.title) app.append(el("p", "muted", g.title));
  const facts = section(null);
  facts.id = "facts";
  facts.append(kv([["candidate", g.candidate], ["tier", g.tier], ["score", num(g.score)],
    ["decided by", g.decided_by], ["failure category", g.failure_category]]));
  const checks = section(`Checks (${(g.checks || []).length})`);
  checks.id = "checks";
  if (g.checks_source) {
    const from = el("p", "muted", g.checks_source === "the run record"
      ? "from the run record, which keeps only which checks failed" + (g.checks_note ? ": " + g.checks_note : "")
      : "recomputed from the kept output with the project's goldens as they are now");
    from.id = "checks-source";
    checks.append(from);
  }
  const again = g.recomputed;
  if (again && again.note) {
    const note = add(el("p", again.status ? "bad" : "muted"), el("strong", null, again.note));
    note.id = "checks-verdict";
    checks.append(note);
  }
  if ((g.checks || []).length) checks.append(checksView(g.checks));
  else checks.append(el("p", "muted", "no checks: decided by " + (g.decided_by || "its tier")));
  const io = section("Output and expected");
  io.id = "output";
  const side = el("div", "side");
  const left = add(el("div"), el("h3", null, "output"));
  preOr(left, g.output, "not kept: this run saved no outputs (keep_outputs = true in assay.toml keeps them)");
  const right = add(el("div"), el("h3", null, "expected (from the project's goldens)"));
  right.id = "expected";
  preOr(right, g.expected, g.goldens_error ? "the project's goldens could not be read: " + g.goldens_error
    : "none in the project's goldens for this id");
  if (g.expected_from) right.append(el("p", "muted mono", "from " + g.expected_from));
  io.append(add(side, left, right));
  diffSection(io, g.expected, g.output, "word diff: expected → output",
    "struck: expected but missing; highlighted: in the output only");
  if ((g.repeats || []).length) {
    const r = section(`Repeats (${g.repeats.length})`);
    g.repeats.forEach((x, i) => {
      r.append(add(el("h3"), `#${i + 1} `, chip(x.passed === false ? "fail" : x.passed ? "pass" : "missing", x.score),
        x.count > 1 ? ` × ${x.count}` : ""));
      preOr(r, x.output, "output not kept");
    });
  }
  if (g.input !== undefined && g.input !== null) preOr(section("Input"), g.input, "");
  if (g.rubric) preOr(section("Rubric (for the judge)"), g.rubric, "");
  if (g.telemetry) {
    const t = section("Telemetry");
    t.id = "telemetry";
    t.append(kv(Object.entries(g.telemetry)));
  }
  const journal = Array.isArray(g.journal) ? {events: g.journal, total: g.journal.length} : g.journal;
  if (journal && (journal.events || []).length) {
    const j = section(`Journal: ${journal.total ?? journal.events.length} events`);
    j.id = "journal";
    if (journal.total > journal.events.length) j.append(el("p", "muted", `the first ${journal.events.length} shown`));
    j.append(journalView(journal.events));
  }
  const att = g.attestation || (g.verdict !== undefined ? {verdict: g.verdict, reasons: g.reasons} : null);
  if (att) section("Attestation").append(attestationView(att));
  document.body.dataset.ready = "golden";
  const order = memory.runOrder && memory.runOrder.runId === runId ? memory.runOrder.items : [];
  const here = order.findIndex(([id, c]) => id === goldenId && (!candidate || c === candidate));
  const step = (d) => {
    const next = order[here + d];
    if (here >= 0 && next) location.hash = goldenHref(runId, next[0], next[1]);
  };
  return {keys: {j: () => step(1), k: () => step(-1)}, back};
}

// --------------------------------------------------------------------------- comparing two runs
function side(label, x) {
  const d = el("span");
  if (!x) return add(d, el("span", "muted", "—"));
  return add(d, chip(x.status, x.score));
}
function compareRow(r) {
  const row = el("div");
  const c = el("span"); c.append(el("span", "chip ch-" + r.change, r.change));
  return add(row, c, el("span", "id", r.id), el("span", null, r.candidate), side("before", r.before),
    side("after", r.after), el("span", "num", signed(r.delta)));
}
function compareDetail(box, r, a, b) {
  box.replaceChildren(add(el("h2"), "Selected: ", el("span", "mono", r.id), " ",
    el("span", "chip ch-" + r.change, r.change)));
  box.hidden = false;
  const s = el("div", "side");
  [["before", r.before, a], ["after", r.after, b]].forEach(([label, x, run]) => {
    const col = add(el("div"), add(el("h3"), `${label} `, x ? chip(x.status, x.score) : el("span", "muted", "absent")));
    if (x) preOr(col, x.output, "output not kept in this run");
    if (run && run.run_id && x) col.append(link(goldenHref(run.run_id, r.id, r.candidate), "open this golden in the run"));
    s.append(col);
  });
  box.append(s);
  diffSection(box, r.before && r.before.output, r.after && r.after.output, "word diff: before → after",
    "struck: before only; highlighted: after only");
}

function conclusionView(c) {
  const box = add(el("div", "conclusion"), el("h3", null, "What the gate concluded"));
  if (typeof c === "string") return add(box, el("p", null, c));
  const gate = c.gate ? String(c.gate) : "";
  box.append(add(el("p"), "gate: ", el("strong", gate === "failed" ? "error" : null, gate || "n/a")));
  const ul = el("ul", "plain");
  (c.regressions || []).forEach((r) => ul.append(el("li", null, regressionText(r))));
  (c.gate_failures || []).forEach((r) => ul.append(el("li", null, typeof r === "string" ? r : brief(r))));
  if (ul.children.length) box.append(ul);
  return box;
}

async function pageCompare(a, b, query) {
  const d = await api(`/api/compare?a=${enc(a)}&b=${enc(b)}`);
  const rows = d.rows || [];
  const f = {change: query.get("change"), q: query.get("q")};
  const base = `#/compare/${enc(a)}/${enc(b)}`;
  app.replaceChildren(add(el("div", "crumbs"), link("#/runs", "Runs"), " / compare"));
  app.append(el("h1", null, "Compare two runs"));
  const head = section(null);
  const label = (run, fallback) => run
    ? [`${run.kind || ""} ${run.mode || ""}`, when(run.started_at)].filter(Boolean).join(" · ") : fallback;
  const pair = el("div", "side");
  // The API names which side is before: with b = baseline, the baseline is before and a after.
  const swap = d.before !== undefined && d.a && d.before !== d.a.run_id;
  const [before, after] = swap ? [d.b, d.a] : [d.a, d.b];
  [["before", before], ["after", after]].forEach(([title, run]) => {
    const col = add(el("div"), el("h3", null, title));
    const id = run && run.run_id;
    if (id && id !== "baseline") col.append(link(runHref(id), id, "mono"));
    else col.append(el("span", "mono", "the baseline (assay-baseline.json)"));
    add(col, el("p", "muted", label(run, "")), kv([["pass rate", pct(run && run.pass_rate)],
      ["mean score", num(run && run.mean_score)], ["results", run && run.totals && run.totals.results]]));
    pair.append(col);
  });
  head.append(pair);
  if (d.conclusion) head.append(conclusionView(d.conclusion));
  const detail = section(null);
  detail.id = "detail"; detail.hidden = true;
  const list = section(null);
  list.id = "rows";
  const counts = {};
  rows.forEach((r) => { counts[r.change] = (counts[r.change] || 0) + 1; });
  const bar = el("div", "bar");
  const buttons = [];
  const mk = (value, text) => {
    const btn = el("button", null, text);
    btn.type = "button"; btn.dataset.change = value;
    btn.addEventListener("click", () => { f.change = value; refresh(); });
    buttons.push(btn); bar.append(btn);
  };
  mk("", `all ${rows.length}`);
  CHANGES.forEach((c) => { if (counts[c]) mk(c, `${c} ${counts[c]}`); });
  const count = el("span", "muted");
  add(bar, searchBox("search goldens", f.q, (q) => { f.q = q; refresh(); }), count);
  add(list, el("h2", null, "Per golden, biggest change first"), bar,
    header("g-compare", ["change", "golden", "candidate", "before", "after", "Δ score"], [5]));
  const v = vlist(list, "g-compare", [], compareRow, (r) => compareDetail(detail, r, before, after));
  function refresh() {
    const q = (f.q || "").toLowerCase();
    const shown = rows.filter((r) => (!f.change || r.change === f.change) &&
      (!q || `${r.id} ${r.candidate || ""}`.toLowerCase().includes(q)));
    buttons.forEach((x) => x.setAttribute("aria-pressed", String((f.change || "") === x.dataset.change)));
    count.textContent = `${shown.length} shown`;
    memory.compareHash = setQuery(base, f);
    v.set(shown, 0);
  }
  refresh();
  document.body.dataset.ready = "compare";
  return {list: v, dispose: () => v.dispose(), back: "#/runs"};
}

// ---------------------------------------------------------------------------------- live runs
function liveView(box, data, seen) {
  const runs = data.runs || [];
  const key = (r) => r.run_id || r.pid || r.started_at;
  const now = new Set(runs.map(key));
  const finished = [...seen].filter((k) => !now.has(k));
  box.replaceChildren();
  if (!runs.length) {
    box.append(el("p", "muted", "No run in progress. Start assay gate, eval or bench in this project: it shows up here."));
  }
  runs.forEach((r) => {
    const s = el("section", "live-run");
    const p = el("progress");
    p.max = Math.max(1, r.total || 0); p.value = r.done || 0;
    const unit = UNITS[r.phase] || "done";
    add(s, add(el("h2"), el("span", "chip k-" + r.kind, r.kind), ` started ${when(r.started_at)}`,
      r.pid ? el("span", "muted", ` · process ${r.pid}`) : null),
      add(el("div", "bar"), p,
        el("span", "live-progress", `${r.done ?? 0} of ${r.total ?? "?"} ${unit} done`)));
    const counts = Object.entries(r.counts || {});
    if (counts.length) {
      s.append(add(el("p", "live-counts"),
        ...counts.flatMap(([st, n], i) => [i ? " · " : "", chip(st), ` ${n}`])));
    }
    const so = r.results_so_far || [];
    if (so.length) {
      const ul = el("ul", "checks");
      so.slice(-200).reverse().forEach((x) => ul.append(add(el("li"), chip(x.status, x.score), " ",
        el("span", "mono", x.id), x.candidate ? el("span", "muted", " · " + x.candidate) : null,
        x.repeat ? el("span", "muted", ` · repeat ${x.repeat + 1}`) : null,
        isNum(x.latency_ms) ? el("span", "muted", ` · ${Math.round(x.latency_ms)} ms`) : null,
        x.cached ? el("span", "muted", " · cached") : null)));
      const counted = counts.reduce((a, [, n]) => a + n, 0) || so.length;
      add(s, el("h3", null, `results so far (${counted}, newest first)`), ul);
    }
    box.append(s);
  });
  if (finished.length) {
    box.append(add(el("p", "finished"), `${finished.length} run(s) finished since this page opened: `,
      link("#/runs", "see them in the runs")));
  }
  runs.forEach((r) => seen.add(key(r)));
}

async function pageLive() {
  app.replaceChildren(el("h1", null, "Live"));
  const box = el("div");
  box.id = "live";
  app.append(box);
  const seen = new Set();
  let stopped = false;
  async function tick() {
    try { liveView(box, await api("/api/live"), seen); } catch (e) {
      box.replaceChildren(el("p", "error", String(e.message || e)));
    }
    document.body.dataset.ready = "live";
    if (!stopped) liveTimer = setTimeout(tick, LIVE_POLL_MS);
  }
  await tick();
  return {dispose: () => { stopped = true; clearTimeout(liveTimer); }, back: "#/runs"};
}

// ----------------------------------------------------------------------------- routes and keys
async function route() {
  if (view && view.dispose) view.dispose();
  view = null;
  document.body.dataset.ready = "";
  const {parts, query} = parseHash();
  document.querySelectorAll("[data-nav]").forEach((a) =>
    a.classList.toggle("on", a.dataset.nav === (parts[0] || "runs")));
  window.scrollTo(0, 0);
  try {
    if (parts[0] === "run" && parts[1] && parts[2] === "golden" && parts[3]) {
      view = await pageGolden(parts[1], parts.slice(3).join("/"), query);
    } else if (parts[0] === "run" && parts[1]) {
      view = await pageRun(parts[1], query);
    } else if (parts[0] === "compare" && parts[1] && parts[2]) {
      view = await pageCompare(parts[1], parts[2], query);
    } else if (parts[0] === "live") {
      view = await pageLive();
    } else {
      view = await pageRuns(query);
    }
  } catch (e) { fail(e); }
}

function onKey(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  // Keys go to the page unless a text field or a menu has them (a ticked checkbox does not).
  const typing = e.target.closest &&
    e.target.closest("input:not([type=checkbox]):not([type=radio]),select,textarea");
  if (e.key === "Escape") {
    if (typing) { e.target.blur(); return; }
    if (view && view.back) location.hash = view.back;
    return;
  }
  if (typing) return;
  const keys = (view && view.keys) || {};
  const list = view && view.list;
  if (e.key === "/") {
    const s = document.getElementById("search");
    if (s) { e.preventDefault(); s.focus(); s.select(); }
  } else if (keys[e.key]) {
    e.preventDefault(); keys[e.key]();
  } else if (list && (e.key === "j" || e.key === "ArrowDown" && e.target === document.body)) {
    e.preventDefault(); list.move(1);
  } else if (list && (e.key === "k" || e.key === "ArrowUp" && e.target === document.body)) {
    e.preventDefault(); list.move(-1);
  } else if (list && e.key === "Enter" && !e.target.closest("a,button")) {
    e.preventDefault(); list.open();
  }
}

// Light, dark or the system's choice; remembered in this browser only.
const THEMES = ["auto", "light", "dark"];
function applyTheme(t) {
  if (t === "auto") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
  document.getElementById("theme").textContent = "theme: " + t;
}
function setupTheme() {
  let t = "auto";
  try { t = localStorage.getItem("assay-view-theme") || "auto"; } catch (e) { t = "auto"; }
  applyTheme(THEMES.includes(t) ? t : "auto");
  document.getElementById("theme").addEventListener("click", () => {
    const now = document.documentElement.dataset.theme || "auto";
    const next = THEMES[(THEMES.indexOf(now) + 1) % THEMES.length];
    applyTheme(next);
    try { localStorage.setItem("assay-view-theme", next); } catch (e) { /* private mode */ }
  });
}

// The header's count of runs in progress, on every page (the live page polls faster).
async function liveBadge() {
  const badge = document.getElementById("live-count");
  try {
    const n = ((await api("/api/live")).runs || []).length;
    badge.textContent = String(n); badge.hidden = n === 0;
  } catch (e) { badge.hidden = true; }
  setTimeout(liveBadge, 3000);
}

setupTheme();
setTimeout(liveBadge, 1500);
window.addEventListener("hashchange", route);
document.addEventListener("keydown", onKey);
if (!location.hash) history.replaceState(null, "", "#/runs");
route();
})();
