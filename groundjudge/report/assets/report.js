// groundjudge report.html: renders the JSON blob in #data with DOM APIs only.
// Every piece of run data is set with textContent (or as an attribute value), never parsed as markup.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("data").textContent);
  const S = DATA.strings;
  const JUDGES = DATA.judges;
  const JIDX = new Map(JUDGES.map((j, i) => [j.key, i]));
  const $ = (id) => document.getElementById(id);

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function add(parent, ...children) {
    for (const c of children) if (c !== null && c !== undefined) parent.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    return parent;
  }
  const jcls = (key) => "j" + JIDX.get(key);
  const judge = (key) => JUDGES[JIDX.get(key)];
  const fmt = (x, d) => (x === null || x === undefined ? "-" : Number(x).toFixed(d));
  function swatch(key) { return el("span", null, "swatch " + jcls(key)); }
  function judgeName(key, withRank) {
    const j = judge(key);
    const box = el("span", null, "judge-name");
    box.title = j.spec + (j.run ? "  (run " + j.run + ")" : "");
    add(box, swatch(key));
    if (withRank) add(box, el("span", "#" + j.rank, "rank"));
    const name = el("span");
    for (const part of j.label.split(/(?<=[,;:=\/])/)) add(name, part, el("wbr"));   // break long specs at separators
    add(box, name);
    return box;
  }
  function tag(label) { return el("span", label || "unlabelled", "tag " + (label || "unlabelled")); }

  // --- header: runs and notes -------------------------------------------------------------
  for (const run of DATA.runs) {
    const li = el("li");
    add(li, "run ", el("code", run.name), " · " + run.n + " examples (" + run.eval_split + ") from " +
      run.files.join(", ") + " · data hash ", el("code", run.hash.slice(0, 12)), " · started " + run.started_at);
    $("runs").appendChild(li);
  }
  for (const note of DATA.notes) $("notes").appendChild(el("div", note, "warn"));

  // --- leaderboard --------------------------------------------------------------------------
  const QUALITY = new Set(["balanced_accuracy", "macro_f1", "roc_auc", "pr_auc", "macro_precision", "macro_recall",
    "accuracy"]);
  const LOWER_BETTER = new Set(["latency_p50_s", "latency_p95_s", "usd_per_1000", "tokens_per_response", "n_abstained"]);
  const MARK_BEST = new Set(["balanced_accuracy", "macro_f1", "roc_auc", "latency_p50_s", "usd_per_1000"]);
  const lb = $("leaderboard");
  let sortState = { metric: null, dir: 1 };
  function renderLeaderboard() {
    const head = el("tr");
    const cols = [["judge", "judge"]].concat(DATA.columns);
    for (const [metric, heading] of cols) {
      const th = el("th", heading, metric === "judge" ? "" : "sortable");
      th.dataset.metric = metric;
      if (sortState.metric === metric) th.appendChild(el("span", sortState.dir > 0 ? "▲" : "▼", "arrow"));
      if (metric !== "judge") th.addEventListener("click", () => {
        sortState = { metric, dir: sortState.metric === metric ? -sortState.dir : (LOWER_BETTER.has(metric) ? 1 : -1) };
        renderLeaderboard();
      });
      head.appendChild(th);
    }
    lb.tHead.replaceChildren(head);
    const rows = DATA.leaderboard.slice();
    if (sortState.metric) {
      const m = sortState.metric;
      rows.sort((a, b) => sortState.dir * ((a.cells[m].value ?? -Infinity) - (b.cells[m].value ?? -Infinity)));
    }
    const best = {};
    for (const [metric] of DATA.columns) {
      const vals = DATA.leaderboard.map((r) => r.cells[metric].value).filter((v) => v !== null);
      if (vals.length < 2 || !MARK_BEST.has(metric)) continue;
      const top = QUALITY.has(metric) ? Math.max(...vals) : Math.min(...vals);
      if (vals.filter((v) => v === top).length <= Math.max(1, vals.length / 3)) best[metric] = top;  // not when most tie
    }
    const body = lb.tBodies[0];
    body.replaceChildren();
    for (const row of rows) {
      const tr = el("tr", null, jcls(row.judge));
      tr.dataset.judge = row.judge;
      const first = el("td");
      first.dataset.metric = "judge";
      first.appendChild(judgeName(row.judge, true));
      tr.appendChild(first);
      for (const [metric] of DATA.columns) {
        const cell = row.cells[metric];
        const td = el("td", null, "num");
        td.dataset.metric = metric;
        if (cell.value !== null) td.dataset.value = String(cell.value);
        if (best[metric] !== undefined && cell.value === best[metric]) td.classList.add("best");
        if (cell.ci) {
          td.classList.add("qcell");
          const top = el("div", null, "qval");
          add(top, el("span", cell.text, "v"), el("span", "[" + fmt(cell.ci[0], 2) + ", " + fmt(cell.ci[1], 2) + "]", "ci"));
          const bar = el("div", null, "qbar");
          const fill = el("div", null, "fill");
          fill.style.width = (100 * Math.max(0, Math.min(1, cell.value))) + "%";
          const whisk = el("div", null, "whisk");
          whisk.style.left = (100 * cell.ci[0]) + "%";
          whisk.style.width = (100 * Math.max(0, cell.ci[1] - cell.ci[0])) + "%";
          add(bar, fill, whisk);
          add(td, top, bar);
          td.title = cell.text + "  95% CI [" + fmt(cell.ci[0], 3) + ", " + fmt(cell.ci[1], 3) + "]";
        } else {
          add(td, el("span", cell.text, "v"));
        }
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
  }
  renderLeaderboard();
  $("how-to-read").textContent = "How to read it: " + DATA.how_to_read;

  // --- McNemar matrix -------------------------------------------------------------------------
  (function () {
    const table = $("mcnemar");
    if (JUDGES.length < 2) { table.replaceWith(el("p", "Only one judge: nothing to compare.", "note")); return; }
    const pair = new Map();
    for (const p of DATA.pairwise) { pair.set(p.a + "\u0000" + p.b, p); pair.set(p.b + "\u0000" + p.a, p); }
    const head = el("tr");
    head.appendChild(el("th", "", "rowhead"));
    for (const j of JUDGES) { const th = el("th", "#" + j.rank); th.title = j.label; head.appendChild(th); }
    const thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
    const tbody = el("tbody");
    for (const a of JUDGES) {
      const tr = el("tr");
      const th = el("td", null, "rowhead"); th.appendChild(judgeName(a.key, true)); tr.appendChild(th);
      for (const b of JUDGES) {
        if (a.key === b.key) { tr.appendChild(el("td", "—", "self")); continue; }
        const p = pair.get(a.key + "\u0000" + b.key);
        const td = el("td", p && p.mcnemar_p !== null ? Number(p.mcnemar_p).toPrecision(2) : "n/a");
        if (p && p.mcnemar_p !== null && p.mcnemar_p < 0.05) td.className = "sig";
        td.title = "#" + a.rank + " " + a.label + "  vs  #" + b.rank + " " + b.label + ": n = " + (p ? p.n : 0);
        tr.appendChild(td);
      }
      tbody.appendChild(tr);
    }
    table.appendChild(tbody);
  })();

  // --- prompt variants ---------------------------------------------------------------------------
  // Pairs of judges that differ only in prompts or model: B against A, their template diffs, and every answer
  // on which they disagree (filterable by pair, gold label and text).
  (function () {
    const V = DATA.variants;
    if (!V || !V.pairs.length) { $("variants-section").remove(); $("nav-variants").remove(); return; }
    const box = $("variants");
    const col = (name) => V.headers.indexOf(name);
    const pairName = (p, i) => "#" + (i + 1) + " " + p.label;
    add(box, el("p", V.note, "note"));

    // the pairs
    const table = el("table"); table.id = "variant-pairs";
    const hr = el("tr");
    V.headers.forEach((h, i) => hr.appendChild(el("th", h, i < 3 ? "txt" : null)));
    const thead = el("thead"); thead.appendChild(hr); table.appendChild(thead);
    const tbody = el("tbody");
    const metricCol = { balanced_accuracy: col("Δ balanced acc. [95% CI]"), macro_f1: col("Δ macro-F1 [95% CI]") };
    V.pairs.forEach((p, i) => {
      const tr = el("tr"); tr.dataset.pair = String(i);
      p.cells.forEach((c, k) => {
        const td = el("td", null, k < 3 ? "txt" : "num");
        const key = k === 0 ? p.a : k === 1 ? p.b : null;
        if (key !== null && JIDX.has(key)) td.appendChild(judgeName(key, true)); else td.textContent = c;
        tr.appendChild(td);
      });
      for (const [metric, k] of Object.entries(metricCol)) {      // a CI that excludes 0: a real change
        const m = p.metrics[metric];
        if (k >= 0 && m && (m.ci95[0] > 0 || m.ci95[1] < 0)) tr.children[k].classList.add(m.delta > 0 ? "up" : "down");
      }
      if (p.mcnemar_p !== null && p.mcnemar_p < 0.05) tr.children[col("McNemar p")].classList.add("sig");
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    const wrap = el("div", null, "scroll"); wrap.appendChild(table); box.appendChild(wrap);

    // the template diffs: every line set as text, coloured by its first character
    add(box, el("h3", "What changed in the prompts"));
    const few = V.pairs.reduce((n, p) => n + p.diffs.length, 0) <= 2;
    V.pairs.forEach((p, i) => {
      if (!p.diffs.length) {
        add(box, el("p", pairName(p, i) + ": no recorded template text differs (they differ in " + p.differs.join(", ") + ").", "note"));
        return;
      }
      for (const d of p.diffs) {
        const details = el("details", null, "diff"); details.dataset.pair = String(i);
        details.open = few;
        add(details, el("summary", pairName(p, i) + ": " + d.file));
        const pre = el("pre");
        for (const line of d.text.replace(/\n$/, "").split("\n")) {
          const cls = line.startsWith("+++") || line.startsWith("---") ? "diff-file" : line.startsWith("+") ? "diff-add"
            : line.startsWith("-") ? "diff-del" : line.startsWith("@@") ? "diff-hunk" : null;
          add(pre, el("span", line + "\n", cls));
        }
        details.appendChild(pre); box.appendChild(details);
      }
    });

    // the disagreements
    add(box, el("h3", "Where the variants disagree"));
    const total = V.pairs.reduce((n, p) => n + p.disagree.length, 0);
    if (!total) { add(box, el("p", "The variants agree on every answer they both judged.", "note")); return; }
    add(box, el("p", "Every answer on which the two judges of a pair give different verdicts, with both verdicts " +
      "(✓/✗: right/wrong against gold), scores and reasons. Click a question or answer to read it whole, an id to " +
      "open the example below.", "note"));
    const bar = el("div", null, "filters");
    const pick = el("select"); pick.id = "variants-pair";
    const every = el("option", "every pair (" + total + ")"); every.value = ""; pick.appendChild(every);
    V.pairs.forEach((p, i) => {
      const o = el("option", pairName(p, i) + " (" + p.disagree.length + ")"); o.value = String(i); pick.appendChild(o);
    });
    const gold = el("select"); gold.id = "variants-gold";
    const golds = new Set(V.pairs.flatMap((p) => p.disagree.map((d) => d.gold || "")));
    for (const [v, text] of [["*", "any gold label"], ["grounded", "gold grounded"], ["ungrounded", "gold ungrounded"], ["", "unlabelled"]]) {
      if (v !== "*" && !golds.has(v)) continue;
      const o = el("option", text); o.value = v; gold.appendChild(o);
    }
    const search = el("input"); search.type = "search"; search.id = "variants-search";
    search.placeholder = "search id, question, answer or reason";
    const count = el("span", null, "count"); count.id = "variants-count";
    const pickLabel = el("label", "pair "); pickLabel.appendChild(pick);
    add(bar, pickLabel, gold, search, count);
    box.appendChild(bar);

    const rows = el("table"); rows.id = "variant-disagreements";
    const head = el("tr");
    const headA = el("th", "A verdict", "txt"), headB = el("th", "B verdict", "txt");
    add(head, el("th", "pair", "txt"), el("th", "example", "txt"), el("th", "gold", "txt"),
      el("th", "question / answer", "txt"), headA, el("th", "A reason", "txt"), headB, el("th", "B reason", "txt"));
    const rhead = el("thead"); rhead.appendChild(head); rows.appendChild(rhead);
    const rbody = el("tbody");
    const INEX = new Set(DATA.examples.map((e) => e.key));
    const clip = (text, cls) => {
      const d = el("div", text, "clip" + (cls ? " " + cls : ""));
      d.addEventListener("click", () => d.classList.toggle("open"));
      return d;
    };
    const verdictCell = (v) => {
      const td = el("td", null, "txt verdict-cell");
      add(td, tag(v.label));
      if (v.right !== null) add(td, " ", el("span", v.right ? "✓" : "✗", v.right ? "mark-ok" : "mark-bad"));
      if (v.score !== null) add(td, el("div", "score " + fmt(v.score, 2), "kv"));
      return td;
    };
    const texts = [];                              // per row: what the text filter searches
    V.pairs.forEach((p, i) => {
      for (const d of p.disagree) {
        const tr = el("tr"); tr.dataset.pair = String(i); tr.dataset.id = d.id; tr.dataset.gold = d.gold || "";
        const who = el("td", null, "txt pair");
        add(who, swatch(p.a), "#" + judge(p.a).rank + " → ", swatch(p.b), "#" + judge(p.b).rank);
        who.title = p.label;
        const idCell = el("td", null, "txt");
        if (INEX.has(d.key)) {
          const a = el("a", d.id); a.href = "#explorer-section";
          a.addEventListener("click", () => {
            for (const f of ["f-disagree", "f-wrong", "f-abstain"]) $(f).checked = false;
            $("f-type").value = ""; $("f-judge").value = ""; $("f-search").value = d.id;
            render();
            const at = shown.findIndex((ex) => ex.key === d.key);
            if (at >= 0) select(at);
          });
          idCell.appendChild(a);
        } else idCell.textContent = d.id;
        const question = d.question === null ? "" : S[d.question], answer = S[d.answer];
        const qa = el("td", null, "txt qa");
        if (question) qa.appendChild(clip(question, "q"));
        qa.appendChild(clip(answer));
        const reasonA = S[d.a.reason] || "", reasonB = S[d.b.reason] || "";
        const goldCell = el("td", null, "txt"); goldCell.appendChild(tag(d.gold));
        const whyA = el("td", null, "txt"); whyA.appendChild(clip(reasonA || "-", "reason"));
        const whyB = el("td", null, "txt"); whyB.appendChild(clip(reasonB || "-", "reason"));
        add(tr, who, idCell, goldCell, qa, verdictCell(d.a), whyA, verdictCell(d.b), whyB);
        texts.push([d.id, question, answer, reasonA, reasonB, d.a.label, d.b.label].join("\n").toLowerCase());
        rbody.appendChild(tr);
      }
    });
    rows.appendChild(rbody);
    const rwrap = el("div", null, "scroll"); rwrap.appendChild(rows); box.appendChild(rwrap);

    function apply() {
      const q = search.value.trim().toLowerCase(), only = pick.value, g = gold.value;
      let visible = 0;
      Array.from(rbody.children).forEach((tr, r) => {
        const ok = (!only || tr.dataset.pair === only) && (g === "*" || tr.dataset.gold === g) && (!q || texts[r].includes(q));
        tr.hidden = !ok;
        if (ok) visible += 1;
      });
      count.textContent = visible + " of " + total + " disagreements shown";
      const p = only ? V.pairs[Number(only)] : null;       // one pair: name its judges in the headings
      headA.textContent = p ? "A: " + judge(p.a).label : "A verdict";
      headB.textContent = p ? "B: " + judge(p.b).label : "B verdict";
    }
    for (const c of [pick, gold]) c.addEventListener("change", apply);
    search.addEventListener("input", apply);
    apply();
  })();

  // --- other tables ------------------------------------------------------------------------------
  const NUMERIC = /^(-|n\/a|[-+]?[\d.]+(e[-+]?\d+)?( \(.*\)| \[.*\])?)$/;
  for (const t of DATA.tables) {
    const box = $("tables");
    add(box, el("h3", t.title));
    if (t.note) add(box, el("p", t.note, "note"));
    const table = el("table");
    table.id = "table-" + t.id;
    const hr = el("tr");
    for (const h of t.headers) hr.appendChild(el("th", h));
    const thead = el("thead"); thead.appendChild(hr); table.appendChild(thead);
    const tbody = el("tbody");
    const numeric = t.headers.map((_, i) => t.rows.every((row) => NUMERIC.test(row[i])));
    t.rows.forEach((row, r) => {
      const tr = el("tr");
      row.forEach((c, i) => {
        const td = el("td", null, numeric[i] ? "num" : "txt");
        if (i === 0 && t.keys && t.keys[r] && JIDX.has(t.keys[r])) td.appendChild(judgeName(t.keys[r], true));
        else td.textContent = c;
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    numeric.forEach((isNum, i) => { if (!isNum) hr.children[i].classList.add("txt"); });
    table.appendChild(tbody);
    const wrap = el("div", null, "scroll"); wrap.appendChild(table); box.appendChild(wrap);
  }

  // --- explorer -----------------------------------------------------------------------------
  const EX = DATA.examples;
  const types = new Set();
  EX.forEach((e) => e.error_types.forEach((t) => types.add(t)));
  for (const t of [...types].sort()) { const o = el("option", t); o.value = t; $("f-type").appendChild(o); }
  if (!types.size) $("f-type").closest("label").style.display = "none";
  for (const j of JUDGES) { const o = el("option", "#" + j.rank + " " + j.label); o.value = j.key; $("f-judge").appendChild(o); }
  if (DATA.total_examples > EX.length) {
    $("cap").textContent = "The runs hold " + DATA.total_examples + " examples; this page embeds " + EX.length +
      " of them (--max-examples " + DATA.max_examples + "): disagreements first, then wrong verdicts, then abstentions, then the rest.";
  } else $("cap").remove();

  // suspected prompt injections: the spans a judge found that address it, and what it did about them
  const injOf = (v) => (v && v.injection) || [];
  const hasInj = (ex) => Object.values(ex.verdicts).some((v) => injOf(v).length > 0);
  if (!EX.some(hasInj)) $("f-inj").closest("label").style.display = "none";
  function injBadge(actions, short) {
    const what = [...new Set(actions.map((a) => a || "flag"))].join(" / ");
    const b = el("span", short ? "⚠" : "⚠ injection suspected (" + what + ")", "inj-badge");
    b.title = "injection suspected (" + what + ")";
    return b;
  }
  function injBadgeOf(ex) {
    const flagged = Object.values(ex.verdicts).filter((v) => injOf(v).length);
    return flagged.length ? flagged.map((v) => v.injection_action) : null;
  }
  // spans of one judged text (field "answer" / "question", or "context" with its document) from every verdict
  // hallucinated spans a token-tagging judge (spans) marked in the answer
  function tagSpans(ex, keys) {
    const spans = [];
    for (const k of keys) for (const c of ex.verdicts[k].claims) {
      if (c.kind === "span" && c.start !== null) spans.push({ start: c.start, end: c.end, cls: "span-halluc",
        title: judge(k).label + " — hallucinated span" + (c.reason ? ": " + c.reason : "") });
    }
    return spans;
  }
  function injSpans(ex, keys, field, doc) {
    const spans = [];
    for (const k of keys) for (const f of injOf(ex.verdicts[k])) {
      if (f.field !== field || f.start === null || (field === "context" && f.doc !== doc)) continue;
      spans.push({ start: f.start, end: f.end, cls: "inj",
        title: f.style + " · " + f.detector + (f.decoded ? "\ndecoded: " + f.decoded : "") });
    }
    return spans;
  }

  if (JUDGES.length < 2) {                      // one judge: nothing can disagree
    $("f-disagree").checked = false;
    $("f-disagree").disabled = true;
    $("f-disagree").closest("label").title = "needs two judges or more";
  }

  function flags(ex, only) {
    const keys = Object.keys(ex.verdicts);
    const labels = keys.map((k) => ex.verdicts[k].label);
    if (!only) {
      return {
        disagree: new Set(labels).size > 1,
        wrong: ex.label !== null && labels.some((l) => l !== ex.label),
        abstain: labels.includes("abstain"),
        inj: hasInj(ex),
      };
    }
    const mine = ex.verdicts[only];
    if (!mine) return null;
    return {
      disagree: keys.some((k) => k !== only && ex.verdicts[k].label !== mine.label),
      wrong: ex.label !== null && mine.label !== ex.label,
      abstain: mine.label === "abstain",
      inj: injOf(mine).length > 0,
    };
  }
  function visible() {
    const d = $("f-disagree").checked, w = $("f-wrong").checked, a = $("f-abstain").checked, inj = $("f-inj").checked;
    const t = $("f-type").value, only = $("f-judge").value, q = $("f-search").value.trim().toLowerCase();
    return EX.filter((ex) => {
      const f = flags(ex, only);
      if (!f) return false;
      if ((d && !f.disagree) || (w && !f.wrong) || (a && !f.abstain) || (inj && !f.inj)) return false;
      if (t && !ex.error_types.includes(t)) return false;
      if (q && !(ex.id.toLowerCase().includes(q) || ex.answer.toLowerCase().includes(q) ||
                 (ex.question || "").toLowerCase().includes(q))) return false;
      return true;
    });
  }

  // Text with highlighted spans (which may overlap): cut at every boundary, one <mark> per covered piece.
  function highlighted(text, spans, cls) {
    const box = el("div", null, cls);
    const ok = spans.filter((s) => Number.isInteger(s.start) && Number.isInteger(s.end) && s.start < s.end && s.start >= 0)
      .map((s) => Object.assign({}, s, { end: Math.min(s.end, text.length) }));
    const cuts = [...new Set([0, text.length].concat(ok.flatMap((s) => [s.start, s.end])))].filter((x) => x <= text.length).sort((x, y) => x - y);
    for (let i = 0; i + 1 < cuts.length; i++) {
      const a = cuts[i], b = cuts[i + 1], piece = text.slice(a, b);
      const cover = ok.filter((s) => s.start <= a && s.end >= b)
        .sort((x, y) => (y.cls === "inj") - (x.cls === "inj"));   // a suspected injection shows over the rest
      if (!cover.length) { box.appendChild(document.createTextNode(piece)); continue; }
      const kinds = new Set(cover.map((s) => s.cls));          // several judges on one piece: outlined
      const m = el("mark", piece, cover[0].cls + (kinds.size > 1 ? " multi" : ""));
      m.title = [...new Set(cover.map((s) => s.title))].join("\n");
      box.appendChild(m);
    }
    return box;
  }

  function showCall(call) {
    const det = el("details", null, "call");
    const bits = [call.template, call.model, call.input_tokens + " in / " + call.output_tokens + " out tokens",
      "$" + fmt(call.cost_usd, 5), fmt(call.latency_s, 2) + " s"];
    if (call.queue_s) bits.push("queued " + fmt(call.queue_s, 2) + " s");
    if (call.server_s !== null && call.server_s !== undefined) bits.push("server " + fmt(call.server_s, 2) + " s");
    if (call.cached) bits.push("cached");
    if (call.attempts > 1) bits.push(call.attempts + " attempts");
    if (call.error) bits.push("error: " + call.error);
    det.appendChild(el("summary", bits.join(" · ")));
    for (const m of call.messages) {
      const box = el("div", null, "msg");
      add(box, el("div", m.role, "role"), el("pre", m.content === null ? "" : S[m.content]));
      det.appendChild(box);
    }
    const resp = el("div", null, "msg");
    add(resp, el("div", "raw response", "role"), el("pre", call.raw_output === null ? "(none)" : S[call.raw_output]));
    det.appendChild(resp);
    return det;
  }

  function showFindings(found) {
    const list = el("ul", null, "inj-list");
    for (const f of found) {
      const li = el("li");
      const where = f.field === "context" ? "document " + (f.doc + 1) : f.field;
      add(li, el("span", f.style, "tag inj-style"), " " + where + " · " + f.detector + ": ", el("q", f.text));
      if (f.decoded) add(li, " → decoded: ", el("q", f.decoded));
      if (f.start === null) add(li, el("span", " (not located in the text)", "kv"));
      list.appendChild(li);
    }
    return list;
  }

  function showVerdict(ex, key) {
    const v = ex.verdicts[key];
    const box = el("div", null, "verdict " + jcls(key));
    box.dataset.judge = key;
    const head = el("div", null, "vhead");
    const right = ex.label === null ? null : v.label === ex.label;
    add(head, judgeName(key, true), tag(v.label),
      right === null ? null : el("span", right ? "✓ right" : "✗ wrong", right ? "mark-ok" : "mark-bad"));
    const facts = [];
    if (v.score !== null) facts.push("score " + fmt(v.score, 3) + (v.threshold !== null ? " vs threshold " + fmt(v.threshold, 3) : ""));
    if (v.abstain_reason) facts.push("abstained: " + v.abstain_reason);
    facts.push("path " + v.path, fmt(v.latency_s, 3) + " s" + (v.queue_s ? " (+ " + fmt(v.queue_s, 3) + " s queued)" : ""));
    if (v.cost_usd) facts.push("$" + fmt(v.cost_usd, 5));
    add(head, el("span", facts.join(" · "), "kv"));
    if (injOf(v).length) add(head, injBadge([v.injection_action]));
    box.appendChild(head);
    if (injOf(v).length) box.appendChild(showFindings(injOf(v)));
    if (v.claims.length) {
      const tagged = v.claims.every((c) => c.kind === "span");
      const spans = v.claims.map((c) => ({ start: c.start, end: c.end, cls: c.kind === "span" ? "span-halluc" : "claim " + c.label,
        title: (c.kind === "span" ? "hallucinated span" : c.label) + (c.reason ? ": " + c.reason : "") }));
      box.appendChild(el("h4", tagged ? "Answer, hallucinated spans marked" : "Answer, claim by claim"));
      box.appendChild(highlighted(ex.answer, spans, "text answer"));
      const table = el("table", null, "claims");
      const tb = el("tbody");
      for (const c of v.claims) {
        const tr = el("tr");
        const lab = el("td", null, "c-lab"); lab.appendChild(el("span", c.label, "tag lab-" + c.label)); tr.appendChild(lab);
        const body = el("td");
        add(body, el("div", c.text));
        if (c.evidence && c.evidence.text) add(body, el("div", "evidence (document " + (c.evidence.doc + 1) + "): “" + c.evidence.text + "”", "quote"));
        const extra = [];
        if (c.score !== null) extra.push("score " + fmt(c.score, 3));
        if (c.error_type) extra.push("error type: " + c.error_type);
        if (c.reason) extra.push(c.reason);
        if (extra.length) add(body, el("div", extra.join(" · "), "reason"));
        tr.appendChild(body);
        tb.appendChild(tr);
      }
      table.appendChild(tb);
      box.appendChild(table);
    }
    if (v.stages.length) {
      box.appendChild(el("div", "stages: " + v.stages.map((s) => s.path + " → " + s.label + (s.score !== null ? " (" + fmt(s.score, 3) + ")" : "") +
        (s.abstain_reason ? " [" + s.abstain_reason + "]" : "")).join("  ·  "), "stages"));
    }
    if (v.calls.length) {
      box.appendChild(el("h4", v.calls.length + " LLM call" + (v.calls.length > 1 ? "s" : "")));
      v.calls.forEach((call) => box.appendChild(showCall(call)));
    }
    return box;
  }

  function show(ex) {
    const d = $("detail");
    d.replaceChildren();
    d.scrollTop = 0;
    const head = el("div", null, "ex-head");
    add(head, el("h3", ex.id), el("span", "gold", "kv"), tag(ex.label));
    ex.error_types.forEach((t) => head.appendChild(el("span", t, "tag etype")));
    const meta = Object.entries(ex.meta).map(([k, v]) => k + ": " + v);
    if (ex.split) meta.unshift("split: " + ex.split);
    if (meta.length) head.appendChild(el("span", meta.join(" · "), "kv"));
    const actions = injBadgeOf(ex);
    if (actions) head.appendChild(injBadge(actions));
    d.appendChild(head);
    const keys = JUDGES.map((j) => j.key).filter((k) => ex.verdicts[k]);
    if (ex.question) { d.appendChild(el("h4", "Question")); d.appendChild(highlighted(ex.question, injSpans(ex, keys, "question"), "text question")); }
    d.appendChild(el("h4", "Context" + (ex.docs.length > 1 ? " (" + ex.docs.length + " documents)" : "")));
    const withEvidence = keys.filter((k) => ex.verdicts[k].claims.some((c) => c.evidence && c.evidence.start !== null));
    if (withEvidence.length) {
      const legend = el("div", null, "legend");
      add(legend, "evidence highlighted by: ");
      withEvidence.forEach((k) => { const s = el("span"); add(s, swatch(k), judge(k).label); legend.appendChild(s); });
      d.appendChild(legend);
    }
    ex.docs.forEach((ref, i) => {
      const spans = [];
      for (const k of keys) for (const c of ex.verdicts[k].claims) {
        if (c.evidence && c.evidence.doc === i && c.evidence.start !== null)
          spans.push({ start: c.evidence.start, end: c.evidence.end, cls: "ev " + jcls(k),
            title: judge(k).label + " — " + c.label + ": " + c.text });
      }
      spans.push(...injSpans(ex, keys, "context", i));
      if (ex.docs.length > 1) d.appendChild(el("div", "Document " + (i + 1), "doc-title"));
      d.appendChild(highlighted(S[ref], spans, "text doc"));
    });
    d.appendChild(el("h4", "Answer"));
    const tags = tagSpans(ex, keys);
    d.appendChild(highlighted(ex.answer, injSpans(ex, keys, "answer").concat(tags), "text answer-text"));
    if (tags.length) {
      const l = el("div", null, "legend");
      const s = el("span"); add(s, el("mark", "hallucinated span", "span-halluc"), "marked by a token-tagging judge; hover for its probability");
      l.appendChild(s); d.appendChild(l);
    }
    if (actions) {
      const l = el("div", null, "legend");
      const s = el("span"); add(s, el("mark", "suspected injection", "inj"), "hover a mark for its style and detector");
      l.appendChild(s); d.appendChild(l);
    }
    const legend = el("div", null, "legend");
    for (const lab of ["supported", "contradicted", "unverifiable"]) { const s = el("span"); add(s, el("mark", lab, "claim " + lab)); legend.appendChild(s); }
    d.appendChild(el("h4", "Verdicts"));
    d.appendChild(legend);
    keys.forEach((k) => d.appendChild(showVerdict(ex, k)));
  }

  let shown = [];
  let selected = null;
  function select(i) {
    if (i < 0 || i >= shown.length) return;
    const list = $("list");
    list.querySelectorAll(".sel").forEach((x) => x.classList.remove("sel"));
    const item = list.children[i];
    item.classList.add("sel");
    // keep the selection in view inside the list, without scrolling the page
    const top = item.offsetTop, bottom = top + item.offsetHeight;
    if (top < list.scrollTop) list.scrollTop = top;
    else if (bottom > list.scrollTop + list.clientHeight) list.scrollTop = bottom - list.clientHeight;
    selected = shown[i].key;
    show(shown[i]);
  }
  function render() {
    const list = $("list");
    list.replaceChildren();
    shown = visible();
    $("count").textContent = shown.length + " of " + EX.length + " examples shown";
    if (!shown.length) {
      list.appendChild(el("div", "No example matches these filters.", "empty"));
      $("detail").replaceChildren(el("p", "No example selected.", "empty"));
      return;
    }
    shown.forEach((ex, i) => {
      const item = el("div", null, "item");
      item.dataset.key = ex.key;
      item.dataset.id = ex.id;
      const top = el("div", null, "top");
      add(top, el("span", ex.id, "id"), tag(ex.label));
      const actions = injBadgeOf(ex);
      if (actions) top.appendChild(injBadge(actions, true));
      const pills = el("div", null, "pills");
      for (const j of JUDGES) {
        const v = ex.verdicts[j.key];
        if (!v) continue;
        const wrong = ex.label !== null && v.label !== ex.label;
        const p = el("span", null, "pill " + v.label + (wrong ? " wrong" : ""));
        add(p, swatch(j.key), "#" + j.rank + " " + (v.label === "grounded" ? "G" : v.label === "ungrounded" ? "U" : "A"));
        p.title = j.label + ": " + v.label + (wrong ? " (wrong)" : "");
        pills.appendChild(p);
      }
      add(item, top, el("div", ex.answer, "preview"), pills);
      item.addEventListener("click", () => select(i));
      list.appendChild(item);
    });
    const again = shown.findIndex((ex) => ex.key === selected);
    select(again >= 0 ? again : 0);
  }
  ["f-disagree", "f-wrong", "f-abstain", "f-inj", "f-type", "f-judge"].forEach((id) => $(id).addEventListener("change", render));
  $("f-search").addEventListener("input", render);
  $("list").addEventListener("keydown", (e) => {
    const i = shown.findIndex((ex) => ex.key === selected);
    if (e.key === "ArrowDown" || e.key === "j") { select(i + 1); e.preventDefault(); }
    if (e.key === "ArrowUp" || e.key === "k") { select(i - 1); e.preventDefault(); }
  });
  render();
})();
