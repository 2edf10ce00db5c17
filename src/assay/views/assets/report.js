
"use strict";
(() => {
const D = JSON.parse(document.getElementById("assay-data").textContent);
const PAGE = 200;
const LABEL = {"pass": "PASS", "fail": "FAIL", "needs-judge": "NEEDS-JUDGE",
  "no-output": "NO-OUTPUT", "error": "ERROR"};
const byId = (id) => document.getElementById(id);
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}
const pct = (v) => (v === null || v === undefined) ? "n/a" : (v * 100).toFixed(1) + "%";
const num = (v) => (v === null || v === undefined) ? "n/a" : Number(v).toFixed(3);
const show = (v) => typeof v === "string" ? v : JSON.stringify(v, null, 2);
// Small evidence reads best on one line; only big structures get the indented form.
const brief = (v) => { const s = JSON.stringify(v); return s.length <= 80 ? s : show(v); };
function chip(status, score) {
  const s = el("span", "chip st-" + (status || "missing"), LABEL[status] || status || "missing");
  if (score !== null && score !== undefined) s.textContent += " " + num(score);
  return s;
}
function card(label, value, cls) {
  const c = el("div", "card" + (cls ? " " + cls : ""));
  c.append(el("div", "card-label", label), el("div", "card-value", value));
  return c;
}
function table(headers, rows, numeric, compact) {
  const t = el("table", compact ? "grid compact" : "grid"), head = el("tr");
  headers.forEach((h, i) => head.append(el("th", numeric && numeric[i] ? "num" : null, h)));
  t.append(el("thead")); t.tHead.append(head);
  const body = el("tbody");
  rows.forEach((r) => {
    const tr = el("tr");
    r.forEach((v, i) => {
      const td = el("td", numeric && numeric[i] ? "num" : null);
      if (v instanceof Node) td.append(v); else td.textContent = String(v);
      tr.append(td);
    });
    body.append(tr);
  });
  t.append(body);
  const w = el("div", "wrap"); w.append(t);
  return w;
}
function section(title, id) {
  const s = el("section"); if (id) s.id = id;
  s.append(el("h2", null, title));
  byId("content").append(s);
  return s;
}
function notes(parent, items, prefix) {
  if (!items || !items.length) return;
  const ul = el("ul", "notes");
  items.forEach((n) => ul.append(el("li", null, (prefix || "") + n)));
  parent.append(ul);
}
function pre(parent, label, value, missing) {
  const box = el("div");
  box.append(el("h4", null, label));
  if (missing) box.append(el("div", "muted", missing));
  else box.append(el("pre", null, show(value)));
  parent.append(box);
  return box;
}
function compositeSection(comp, withScore) {
  const s = section("Composite", "composite");
  if (withScore) {
    const cards = el("div", "cards");
    cards.append(card("score", num(comp.score)));
    s.append(cards);
  }
  const comps = Object.entries(comp.components || {});
  if (comps.length) s.append(table(["component", "value"], comps.map(([k, v]) => [k, num(v)]),
    [false, true], true));
  const tiers = Object.entries(comp.per_tier || {});
  if (tiers.length) s.append(table(["tier", "pass rate"], tiers.map(([k, v]) => [k, pct(v)]),
    [false, true], true));
}

const GATE = {
  statuses: ["pass", "fail", "needs-judge", "no-output", "error"],
  header() {
    return ["golden", "tier", ...D.candidates.map((c) => c.candidate)];
  },
  summary() {
    const t = D.totals, v = D.verdict;
    const s = section("Summary", "summary"), cards = el("div", "cards");
    const gate = v.state === "failed" ? ["FAILED", "bad"] :
      v.state === "undecided" ? ["could not decide", "bad"] :
      v.state === "passed" ? ["passed", "ok"] : ["not checked", "neutral"];
    cards.append(card("gate", gate[0], gate[1]), card("pass rate", pct(t.pass_rate)),
      card("mean score", num(t.mean_score)));
    if (D.composite) cards.append(card("composite", num(D.composite.score)));
    cards.append(card("goldens", t.goldens), card("candidates", D.candidates.length));
    s.append(cards);
    notes(s, v.failures, "gate failed: ");
    notes(s, D.safety_notes, "safety: ");
    if (v.baseline) s.append(el("p", "muted", "baseline: " + v.baseline));
    if (D.regressions) {
      const r = section("Regressions (" + D.regressions.length + ")", "regressions");
      if (!D.regressions.length) r.append(el("p", "muted", "No golden regressed."));
      else r.append(table(["golden", "candidate", "before", "after", "why"],
        D.regressions.map((g) => [g.id, g.candidate,
          g.before ? chip(g.before.status, g.before.score) : "-",
          g.after ? chip(g.after.status, g.after.score) : chip("missing"), g.why])));
      notes(r, D.baseline_notes, "note: ");
    }
    if (D.composite) compositeSection(D.composite, true);
    const c = section("Candidates", "candidates");
    c.append(table(["rank", "candidate", "pass rate", "mean score", "pass", "fail",
      "needs-judge", "no-output", "error"],
      D.candidates.map((x, i) => [i + 1, x.candidate, pct(x.pass_rate), num(x.mean_score),
        ...this.statuses.map((k) => x.counts[k] || 0)]),
      [true, false, true, true, true, true, true, true, true]));
    notes(c, D.notes, "note: ");
  },
  counts() { return D.totals.counts || {}; },
  statusesOf(row) { return row.cells.map((c) => c ? c.status : null); },
  search(row) {
    const parts = [row.id, row.tier, row.golden && row.golden.title];
    row.cells.forEach((c) => {
      if (!c) return;
      parts.push(c.status, c.decided_by, ...(c.notes || []));
      (c.checks || []).forEach((k) => { if (!k.passed) parts.push(k.text, k.reason); });
      if (c.failure) parts.push(c.failure.category, c.failure.details);
    });
    return parts.filter((p) => p).join("\n").toLowerCase();
  },
  row(tr, row) {
    tr.append(el("td", "id", row.id), el("td", null, row.tier));
    row.cells.forEach((c) => {
      const td = el("td", "cell st-" + (c ? c.status : "missing"),
        c ? LABEL[c.status] + (c.score == null ? "" : " " + num(c.score)) : "-");
      tr.append(td);
    });
  },
  detail(panel, row) {
    panel.append(el("h3", "mono", row.id));
    const g = row.golden;
    panel.append(el("div", "muted", "tier " + row.tier + (g && g.title ? " · " + g.title : "")));
    if (g) {
      const pair = el("div", "pair");
      pre(pair, "Input", g.input, g.input === null ? "no input" : null);
      pre(pair, "Expected", g.expected, g.has_expected ? null : "no expected value");
      panel.append(pair);
      if (g.rubric) pre(panel, "Rubric", g.rubric);
    }
    row.cells.forEach((c, i) => {
      const box = el("div", "candidate"), name = D.candidates[i].candidate;
      const h = el("h4", null, "candidate " + name + " ");
      box.append(h);
      panel.append(box);
      if (!c) { h.append(chip("missing")); return; }
      h.append(chip(c.status, c.score));
      box.append(el("div", "muted", "decided by " + (c.decided_by || "-") + (c.before ?
        " · baseline: " + (LABEL[c.before.status] || c.before.status) + " " +
        num(c.before.score) : "")));
      notes(box, c.notes);
      if (c.failure || c.telemetry || c.safety) {
        const facts = [];
        if (c.failure) facts.push(["category", c.failure.category], ["details", c.failure.details]);
        if (c.telemetry) facts.push(["cost", "$" + Number(c.telemetry.cost_usd).toFixed(2)],
          ["duration", Number(c.telemetry.duration_s).toFixed(1) + " s"],
          ["tests failed", c.telemetry.tests_failed]);
        if (c.safety) facts.push(["safety", c.safety]);
        box.append(table(["", ""], facts, null, true));
      }
      pre(box, "Output", c.output, c.has_output ? null : "no output");
      if (c.checks && c.checks.length) {
        box.append(el("h4", null, "Checks"));
        box.append(table(["", "assert", "op", "reason", "evidence"], c.checks.map((k) => [
          chip(k.passed ? "pass" : "fail"), k.text, k.op, k.reason || "",
          k.evidence == null ? "" : el("pre", null, brief(k.evidence))])));
      }
    });
  },
};

const K = GATE;
document.title = D.title;
byId("title").textContent = D.title;
byId("subtitle").textContent = D.subtitle;
K.summary();

const rows = D.rows;
const haystack = rows.map((r) => K.search(r));
const statuses = rows.map((r) => K.statusesOf(r));
const open = new Set();
let visible = rows.map((_, i) => i);
let page = 0;

const res = section("Results", "results");
const controls = el("div", "controls");
const filter = el("input");
filter.id = "filter"; filter.type = "search";
filter.placeholder = "Filter by id, tier, status, check or reason…";
filter.setAttribute("aria-label", "filter rows");
controls.append(filter);
const counts = K.counts();
K.statuses.forEach((s) => {
  const label = el("label"), box = el("input", "status-filter");
  box.type = "checkbox"; box.value = s; box.checked = true;
  label.append(box, " ", chip(s), " " + (counts[s] || 0));
  controls.append(label);
});
const pager = el("div", "pager"), prev = el("button", null, "‹ prev");
const next = el("button", null, "next ›"), info = el("span", "muted");
prev.id = "prev"; next.id = "next"; info.id = "page-info";
pager.append(prev, " ", info, " ", next);
controls.append(pager);
res.append(controls);
const grid = el("table", "grid"), headRow = el("tr");
grid.id = "matrix";
K.header().forEach((h) => headRow.append(el("th", null, h)));
grid.append(el("thead")); grid.tHead.append(headRow);
const body = el("tbody");
grid.append(body);
const wrap = el("div", "wrap"); wrap.append(grid);
res.append(wrap);

function detailRow(i) {
  const tr = el("tr", "detail"), td = el("td"), panel = el("div", "panel");
  td.colSpan = K.header().length;
  K.detail(panel, rows[i]);
  td.append(panel); tr.append(td);
  return tr;
}
function render() {
  const pages = Math.max(1, Math.ceil(visible.length / PAGE));
  page = Math.min(page, pages - 1);
  const start = page * PAGE, shown = visible.slice(start, start + PAGE);
  const frag = document.createDocumentFragment();
  shown.forEach((i) => {
    const tr = el("tr", "row");
    tr.tabIndex = 0; tr.dataset.index = i; tr.dataset.id = rows[i].id;
    tr.setAttribute("aria-expanded", open.has(i) ? "true" : "false");
    K.row(tr, rows[i]);
    frag.append(tr);
    if (open.has(i)) frag.append(detailRow(i));
  });
  body.replaceChildren(frag);
  if (!shown.length) {
    const tr = el("tr"), td = el("td", "muted", "No row matches the filter.");
    td.colSpan = K.header().length; tr.append(td); body.append(tr);
  }
  info.textContent = visible.length ? (start + 1) + "–" + (start + shown.length) + " of " +
    visible.length + " (page " + (page + 1) + "/" + pages + ")" : "0 of " + rows.length;
  prev.disabled = page === 0;
  next.disabled = page >= pages - 1;
}
function apply() {
  const terms = filter.value.toLowerCase().split(/\s+/).filter((t) => t);
  const wanted = new Set(Array.from(document.querySelectorAll("input.status-filter"))
    .filter((b) => b.checked).map((b) => b.value));
  visible = [];
  for (let i = 0; i < rows.length; i++) {
    if (!statuses[i].some((s) => s !== null && wanted.has(s))) continue;
    if (terms.every((t) => haystack[i].includes(t))) visible.push(i);
  }
  page = 0;
  render();
}
function toggle(tr) {
  const i = Number(tr.dataset.index);
  if (open.has(i)) {
    open.delete(i);
    const d = tr.nextElementSibling;
    if (d && d.classList.contains("detail")) d.remove();
    tr.setAttribute("aria-expanded", "false");
  } else {
    open.add(i);
    tr.after(detailRow(i));
    tr.setAttribute("aria-expanded", "true");
  }
}
filter.addEventListener("input", apply);
controls.addEventListener("change", (e) => {
  if (e.target.classList.contains("status-filter")) apply();
});
prev.addEventListener("click", () => { page -= 1; render(); wrap.scrollIntoView(); });
next.addEventListener("click", () => { page += 1; render(); wrap.scrollIntoView(); });
body.addEventListener("click", (e) => {
  if (e.target.closest("tr.detail")) return;
  const tr = e.target.closest("tr.row");
  if (tr) toggle(tr);
});
body.addEventListener("keydown", (e) => {
  const tr = e.target.closest ? e.target.closest("tr.row") : null;
  if (tr && e.target === tr && (e.key === "Enter" || e.key === " ")) {
    e.preventDefault(); toggle(tr);
  }
});
render();
})();
