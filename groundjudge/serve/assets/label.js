// groundjudge labelling page: talks to the JSON API of groundjudge/serve/label_app.py.
// Every piece of run data (question, documents, answer, verdicts, notes) is set with textContent, never as markup.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const TOKEN = params.get("token");
  let LABELLER = params.get("labeller");
  let CONFIG = null;
  const cache = new Map();          // id -> item as the API gave it
  const drafts = new Map();         // id -> {types: Set, spans: [], note} not yet posted
  let progress = null;              // the API's Progress
  let current = null;               // id shown
  let busy = false;

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function say(message, isError) {
    const box = $("status");
    box.textContent = message || "";
    box.className = isError ? "error" : "";
  }
  const fmt = (x) => (x === null || x === undefined ? "-" : Number(x).toFixed(3));
  const cps = (s) => Array.from(s);             // code points: offsets are counted as Python counts them

  async function api(path, body) {
    const url = new URL(path, location.href);
    if (LABELLER) url.searchParams.set("labeller", LABELLER);
    const headers = {};
    if (TOKEN) headers["Authorization"] = "Bearer " + TOKEN;
    const init = { headers, cache: "no-store" };
    if (body !== undefined) {
      init.method = "POST";
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(url, init);
    const data = await response.json().catch(() => null);
    if (!response.ok) {
      let reason = data && data.detail !== undefined ? data.detail : response.statusText;
      if (Array.isArray(reason)) reason = reason.map((d) => (d.loc || []).join(".") + ": " + d.msg).join("; ");
      throw new Error(response.status + ": " + reason);
    }
    return data;
  }

  // --- the form's state per item
  function draft(id) {
    if (!drafts.has(id)) {
      const mine = cache.get(id) && cache.get(id).mine;
      drafts.set(id, { types: new Set(mine ? mine.error_types : []), spans: mine ? mine.spans.slice() : [],
                       note: mine ? mine.note : "" });
    }
    return drafts.get(id);
  }

  // --- rendering
  function renderAnswer(item) {
    const box = clear($("answer"));
    const points = cps(item.answer);
    const spans = draft(item.id).spans.slice().sort((a, b) => a.start - b.start);
    let at = 0;
    for (const span of spans) {
      const start = Math.max(span.start, at);
      if (span.end <= start) continue;
      if (start > at) box.appendChild(document.createTextNode(points.slice(at, start).join("")));
      box.appendChild(el("mark", points.slice(start, span.end).join(""), "span"));
      at = span.end;
    }
    if (at < points.length) box.appendChild(document.createTextNode(points.slice(at).join("")));
    const list = clear($("spans"));
    draft(item.id).spans.forEach((span, n) => {
      const li = el("li");
      li.appendChild(el("span", "unsupported " + span.start + "–" + span.end + ": "));
      li.appendChild(el("q", span.text));
      const remove = el("button", "✕", "remove");
      remove.type = "button";
      remove.title = "remove this span";
      remove.addEventListener("click", () => { draft(item.id).spans.splice(n, 1); renderAnswer(item); });
      li.appendChild(remove);
      list.appendChild(li);
    });
  }

  function renderJudges(item) {
    const box = clear($("judges"));
    box.appendChild(el("h2", "Judges"));
    if (item.judges === null) {
      box.appendChild(el("p", "Hidden until you label this item (so they do not anchor you).", "muted"));
      return;
    }
    if (item.stratum) box.appendChild(el("p", "stratum " + item.stratum, "muted"));
    for (const j of item.judges) {
      const div = el("div", null, "verdict");
      div.dataset.judge = j.judge;
      const head = el("div", null, "verdict-head");
      head.appendChild(el("span", j.label, "tag " + j.label));
      head.appendChild(el("span", " " + j.judge, "judge-name"));
      if (j.score !== null) head.appendChild(el("span", " score " + fmt(j.score) +
                                                (j.threshold !== null ? " (threshold " + fmt(j.threshold) + ")" : ""), "muted"));
      div.appendChild(head);
      if (j.abstain_reason) div.appendChild(el("p", "abstained: " + j.abstain_reason, "muted"));
      const claims = el("ul", null, "claims");
      for (const c of j.claims) {
        const li = el("li", null, "claim " + c.label);
        li.appendChild(el("span", c.label + (c.error_type ? " · " + c.error_type : "") + ": ", "claim-label"));
        li.appendChild(el("q", c.text));
        if (c.evidence) { li.appendChild(el("span", " evidence: ", "muted")); li.appendChild(el("q", c.evidence, "evidence")); }
        claims.appendChild(li);
      }
      if (j.claims.length) div.appendChild(claims);
      box.appendChild(div);
    }
  }

  function renderForm(item) {
    const d = draft(item.id);
    for (const box of document.querySelectorAll("#types input")) box.checked = d.types.has(box.value);
    $("note").value = d.note;
    const mine = $("mine");
    mine.textContent = item.mine ? "Your label: " + item.mine.label + " (" + item.mine.time + ")" : "Not labelled by you yet.";
    const state = $("item-state");
    state.textContent = item.mine ? item.mine.label : "unlabelled";
    state.className = "tag " + (item.mine ? item.mine.label : "unlabelled");
  }

  function render(item) {
    $("item-id").textContent = item.id;
    $("item-pos").textContent = "#" + item.position + " of the queue" + (item.shared ? " · shared (overlap)" : "");
    const question = $("question");
    question.textContent = item.question === null ? "(no question)" : item.question;
    question.classList.toggle("muted", item.question === null);
    const docs = clear($("documents"));
    item.documents.forEach((doc, n) => {
      if (item.documents.length > 1) docs.appendChild(el("h3", "Document " + (n + 1)));
      docs.appendChild(el("div", doc, "text doc"));
    });
    renderAnswer(item);
    renderForm(item);
    renderJudges(item);
  }

  function renderProgress() {
    if (!progress) return;
    $("progress").textContent = progress.labelled + " / " + progress.queue_size + " labelled" +
      (progress.labelled_by_anyone !== progress.labelled ? " (" + progress.labelled_by_anyone + " of " +
       progress.queue_total + " by anyone)" : "") +
      (progress.batch ? " · batch " + progress.batch + " (planned from " + progress.planned_from + " labels)" : "");
    $("progress-bar").max = Math.max(1, progress.queue_size);
    $("progress-bar").value = progress.labelled;
  }

  function renderEstimates(est) {
    const box = clear($("estimates"));
    box.appendChild(el("p", est.n_labelled + " labelled (" + est.n_unsure + " unsure left out) of " + est.n_answers +
                       " answers; 95% intervals", "muted"));
    const table = el("table");
    const head = el("tr");
    for (const h of ["judge", "balanced accuracy", "accuracy"]) head.appendChild(el("th", h));
    table.appendChild(head);
    for (const [judge, m] of Object.entries(est.judges)) {
      const tr = el("tr");
      tr.appendChild(el("td", judge, "judge-name"));
      for (const key of ["balanced_accuracy", "accuracy"]) {
        tr.appendChild(el("td", fmt(m[key].estimate) + " [" + fmt(m[key].ci95[0]) + ", " + fmt(m[key].ci95[1]) + "]"));
      }
      table.appendChild(tr);
    }
    box.appendChild(table);
    renderPPI(box, est.ppi);
    // the pairs and metric the queue aims at (else balanced accuracy, the table's headline)
    const aimed = est.pairs.filter((x) => x.queue_target);
    for (const p of aimed.length ? aimed : est.pairs.filter((x) => x.metric === "balanced_accuracy")) {
      const line = el("p", null, "pair");
      line.appendChild(document.createTextNode(p.metric.replace("_", " ") + ": "));
      line.appendChild(el("span", p.a, "judge-name"));
      line.appendChild(document.createTextNode(" − "));
      line.appendChild(el("span", p.b, "judge-name"));
      const same = p.ci95[0] === 0 && p.ci95[1] === 0;
      const toZero = p.separated ? "separated" : same ? "(the same verdict on every answer)" :
        "not separated yet" + (p.more_labels_needed ? " (~" + p.more_labels_needed + " more labels)" : "");
      const toTarget = p.labels_to_half_width === null || p.labels_to_half_width === undefined ? "" :
        p.labels_to_half_width === 0 ? " · ±0.05 reached" : " · ±0.05 in ~" + p.labels_to_half_width + " more";
      line.appendChild(document.createTextNode(": " + (p.estimate >= 0 ? "+" : "") + fmt(p.estimate) + " [" +
        fmt(p.ci95[0]) + ", " + fmt(p.ci95[1]) + "] " + toZero + (same ? "" : toTarget)));
      box.appendChild(line);
      if (p.ahead_for_good && !same) {
        const settled = el("p", null, "pair settled");
        settled.appendChild(document.createTextNode("no further label can change which is ahead: "));
        settled.appendChild(el("span", p.ahead_for_good, "judge-name"));
        box.appendChild(settled);
      }
    }
  }

  function renderPPI(box, ppi) {
    if (!ppi) return;
    if (!Object.keys(ppi.judges).length) {
      box.appendChild(el("p", "PPI++: not given: " + (ppi.skipped || "too few right or wrong answers among the labels"),
                         "muted"));
      return;
    }
    box.appendChild(el("p", "PPI++ over all " + ppi.n_answers + " answers (reference " + ppi.reference + ", " +
                       ppi.n_labelled + " labels of the uniform queue); classical: the labels alone", "muted"));
    const table = el("table");
    const head = el("tr");
    for (const h of ["judge", "accuracy (PPI)", "classical", "balanced acc. (PPI)"]) head.appendChild(el("th", h));
    table.appendChild(head);
    const cell = (f, point, ci) => f ? fmt(f[point]) + " [" + fmt(f[ci][0]) + ", " + fmt(f[ci][1]) + "]" : "-";
    for (const [judge, m] of Object.entries(ppi.judges)) {
      const tr = el("tr");
      tr.appendChild(el("td", judge, "judge-name"));
      tr.appendChild(el("td", cell(m.accuracy, "estimate", "ci95")));
      tr.appendChild(el("td", cell(m.accuracy, "classical_estimate", "classical_ci95")));
      tr.appendChild(el("td", cell(m.balanced_accuracy, "estimate", "ci95")));
      table.appendChild(tr);
    }
    table.id = "ppi-table";
    box.appendChild(table);
  }

  async function refreshEstimates() {
    try { renderEstimates(await api("api/estimates")); } catch (err) { say("estimates: " + err.message, true); }
  }

  // --- moving
  function order() { return progress ? progress.order : []; }
  function labelledByMe(id) { return progress && progress.done.includes(id); }

  async function show(id) {
    if (!id) return;
    current = id;
    document.body.dataset.loaded = "";
    const cached = cache.get(id);
    if (cached) render(cached);
    try {
      const item = await api("api/items/" + encodeURIComponent(id));
      cache.set(id, item);
      // the fresh copy replaces the shown one only if it differs: a re-render would drop a selection the
      // labeller made in the meantime
      if (current === id && (!cached || JSON.stringify(cached) !== JSON.stringify(item))) render(item);
      if (current === id) document.body.dataset.loaded = id;
    } catch (err) { say(err.message, true); }
  }

  function step(delta) {
    const ids = order();
    if (!ids.length) return;
    const at = ids.indexOf(current);
    const next = at < 0 ? 0 : Math.min(ids.length - 1, Math.max(0, at + delta));
    if (ids[next] !== current) { say(""); show(ids[next]); }
  }

  function nextUnlabelled() {
    const ids = order();
    const at = ids.indexOf(current);
    const after = ids.slice(at + 1).find((id) => !labelledByMe(id));
    return after || ids.find((id) => !labelledByMe(id) && id !== current) || null;
  }

  function skip() {
    const next = nextUnlabelled();
    if (next) { say("skipped " + current + " (not labelled)"); show(next); } else say("nothing left to skip to");
  }

  // --- labelling
  async function submit(label) {
    if (busy || !current) return;
    busy = true;
    const id = current;
    const d = draft(id);
    d.note = $("note").value;
    const body = { id, label, error_types: Array.from(d.types), spans: d.spans, note: d.note };
    if (LABELLER) body.labeller = LABELLER;
    try {
      const out = await api("api/labels", body);
      cache.set(id, out.item);
      drafts.delete(id);
      progress = out.progress;
      renderProgress();
      const next = nextUnlabelled();
      say("saved " + id + ": " + label + (out.replanned ? " · batch " + progress.batch + " planned from the " +
          progress.planned_from + " labels so far" : "") + (next ? "" : " · every item of your queue is labelled"));
      if (next) show(next); else render(out.item);
      refreshEstimates();
    } catch (err) {
      say("not saved: " + err.message, true);
    } finally {
      busy = false;
    }
  }

  function toggleType(n) {
    const box = document.querySelectorAll("#types input")[n];
    if (!box || !current) return;
    box.checked = !box.checked;
    const types = draft(current).types;
    if (box.checked) types.add(box.value); else types.delete(box.value);
  }

  function markSelection() {
    if (!current) return;
    const item = cache.get(current);
    const box = $("answer");
    const selection = window.getSelection();
    if (!item || !selection || selection.rangeCount === 0 || selection.isCollapsed) {
      say("select some text in the answer first", true);
      return;
    }
    const range = selection.getRangeAt(0);
    if (!box.contains(range.startContainer) || !box.contains(range.endContainer)) {
      say("select text inside the answer", true);
      return;
    }
    const before = document.createRange();
    before.selectNodeContents(box);
    before.setEnd(range.startContainer, range.startOffset);
    const text16 = box.textContent;
    let start16 = before.toString().length;
    let end16 = start16 + range.toString().length;
    while (start16 < end16 && /\s/.test(text16[start16])) start16++;
    while (end16 > start16 && /\s/.test(text16[end16 - 1])) end16--;
    if (end16 <= start16) { say("select some text in the answer first", true); return; }
    const start = cps(text16.slice(0, start16)).length;
    const end = start + cps(text16.slice(start16, end16)).length;
    const spans = draft(current).spans;
    if (!spans.some((s) => s.start === start && s.end === end)) {
      spans.push({ start, end, text: text16.slice(start16, end16) });
      spans.sort((a, b) => a.start - b.start || a.end - b.end);
    }
    selection.removeAllRanges();
    renderAnswer(item);
    say("marked " + start + "–" + end + " unsupported");
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = event.target instanceof HTMLTextAreaElement ||
      (event.target instanceof HTMLInputElement && event.target.type !== "checkbox");
    if (event.key === "Escape") {
      if (typing) event.target.blur();
      $("help").hidden = true;
      return;
    }
    if (typing) return;
    const actions = {
      g: () => submit("grounded"), u: () => submit("ungrounded"), n: () => submit("unsure"), s: skip,
      m: markSelection, ArrowLeft: () => step(-1), ArrowRight: () => step(1),
      "?": () => { $("help").hidden = !$("help").hidden; },
    };
    let action = actions[event.key];
    if (!action && /^[1-9]$/.test(event.key)) action = () => toggleType(Number(event.key) - 1);
    if (action) { event.preventDefault(); action(); }
  }

  function buildTypes() {
    const box = $("types");
    for (const entry of CONFIG.taxonomy) {
      const label = el("label", null, "type");
      label.title = entry.definition;
      const input = el("input");
      input.type = "checkbox";
      input.value = entry.name;
      input.addEventListener("change", () => {
        const types = draft(current).types;
        if (input.checked) types.add(entry.name); else types.delete(entry.name);
      });
      label.appendChild(input);
      if (entry.key) label.appendChild(el("kbd", entry.key));
      label.appendChild(el("span", " " + entry.name));
      box.appendChild(label);
    }
  }

  function wire() {
    document.addEventListener("keydown", onKey);
    $("b-grounded").addEventListener("click", () => submit("grounded"));
    $("b-ungrounded").addEventListener("click", () => submit("ungrounded"));
    $("b-unsure").addEventListener("click", () => submit("unsure"));
    $("b-skip").addEventListener("click", skip);
    $("b-prev").addEventListener("click", () => step(-1));
    $("b-next").addEventListener("click", () => step(1));
    $("b-mark").addEventListener("mousedown", (e) => e.preventDefault());   // keep the selection
    $("b-mark").addEventListener("click", markSelection);
    $("note").addEventListener("input", () => { if (current) draft(current).note = $("note").value; });
    $("help-button").addEventListener("click", () => { $("help").hidden = !$("help").hidden; });
  }

  async function start() {
    wire();
    try {
      CONFIG = await api("api/config");
      LABELLER = CONFIG.labeller;
      $("run").textContent = CONFIG.run;
      $("labeller").textContent = CONFIG.labeller;
      buildTypes();
      const items = await api("api/items");
      for (const item of items.items) cache.set(item.id, item);
      progress = await api("api/progress");
      renderProgress();
      const first = progress.next || progress.order[0];
      if (first) await show(first); else say("this labeller's queue is empty");
      if (!progress.next && first) say("every item of your queue is labelled: arrows to review");
      refreshEstimates();
      document.body.dataset.ready = "1";
    } catch (err) {
      say("cannot load the queue: " + err.message, true);
    }
  }

  start();
})();
