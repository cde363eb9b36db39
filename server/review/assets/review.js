// The review page: one report's pages in, its draft beside the page images, warnings at their
// fields, keys for the flow, the confirmed draft out. Plain JavaScript, no build step. Nothing is
// stored but the API key (sessionStorage, this tab only): the draft and the images live in this
// tab's memory. The DOM is built once per draft; typing never re-renders it.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const zh = ((navigator.languages && navigator.languages[0]) || navigator.language || "").toLowerCase().startsWith("zh");
  const lang = zh ? "zh-CN" : "en"; // the API writes warnings in the language it is asked for
  const T = {
    title: ["Review a lab report", "核对化验报告"],
    keysButton: ["Keys", "快捷键"],
    keysTitle: ["Keys", "快捷键"],
    keyJK: ["next / previous field with a warning", "下一个 / 上一个有提示的字段"],
    keyEnter: ["in a field: accept it and go to the next field with a warning", "在字段中：确认该字段并跳到下一个有提示的字段"],
    keyEsc: ["leave the field", "离开字段"],
    keyHelp: ["show or hide these keys", "显示或隐藏快捷键"],
    keyTitle: ["API key", "API 密钥"],
    keyWhy: ["This service asks for a key. It is kept in this tab only, until it is closed.", "此服务需要密钥。密钥只保存在本标签页中，关闭即清除。"],
    keyLabel: ["Key", "密钥"],
    keyUse: ["Use this key", "使用此密钥"],
    keyRefused: ["The service did not accept the key. Enter it again.", "服务不接受该密钥，请重新输入。"],
    chooseTitle: ["The pages of one report", "一份报告的各页"],
    filesLabel: ["Choose or drop the pages: photos, scans, PDFs, HEIC, TIFF", "选择或拖入各页：照片、扫描件、PDF、HEIC、TIFF"],
    sexLabel: ["Patient's sex (optional, for the checks of ranges only)", "患者性别（可选，仅用于参考范围的核对）"],
    sexNone: ["not given", "未提供"],
    sexFemale: ["female", "女"],
    sexMale: ["male", "男"],
    read: ["Read the report", "识别报告"],
    clear: ["Clear the pages", "清除所选页"],
    noFiles: ["Choose at least one page.", "请至少选择一页。"],
    reading: ["Reading {n} file(s) with the model… {s} s", "模型正在识别 {n} 个文件…… {s} 秒"],
    pagesDone: ["Pages read: {done} / {pages}… {s} s", "已识别页数：{done} / {pages}…… {s} 秒"],
    reviewTitle: ["Check each value against the page", "请对照原页核对每个数值"],
    report: ["Report", "报告"],
    page: ["Page {n}", "第 {n} 页"],
    pageImage: ["Page {n} as the model saw it", "模型看到的第 {n} 页"],
    noImage: ["No image of this page.", "没有此页的图像。"],
    row: ["row {n}", "第 {n} 行"],
    box: ["Where {path} is printed", "{path} 在页面上的位置"],
    confirm: ["Confirm", "确认"],
    restart: ["Start over", "重新开始"],
    pending: ["{n} field(s) with a warning", "{n} 个字段有提示"],
    confirmed: ["Confirmed. The draft below is what was confirmed.", "已确认。下面是确认后的草稿。"],
    confirmedSent: ["Confirmed, and sent to the page around this one.", "已确认，并已发送给外层页面。"],
    problems: ["The draft cannot be confirmed yet: {n} field(s) to fix, marked in red.", "草稿暂不能确认：有 {n} 个字段需要修正（红色标出）。"],
    download: ["Download JSON", "下载 JSON"],
    copy: ["Copy JSON", "复制 JSON"],
    copied: ["Copied.", "已复制。"],
    again: ["Review another report", "核对另一份报告"],
    failed: ["The service answered {status}: {detail}", "服务返回 {status}：{detail}"],
    network: ["The service could not be reached.", "无法连接到服务。"],
    title_: ["Title", "报告名称"], hospital: ["Hospital", "医院"], checkupDate: ["Date (YYYY-MM-DD)", "检查日期（YYYY-MM-DD）"], reportYear: ["Year", "年份"],
    itemName: ["Item", "项目"], valueNum: ["Value", "结果"], valueText: ["Result as text", "文字结果"], unit: ["Unit", "单位"],
    refLow: ["Low", "下限"], refHigh: ["High", "上限"], refText: ["Range as printed", "参考范围（原文）"], printedFlag: ["Flag", "标记"],
    flagNone: ["none", "无"], flagHigh: ["high ↑", "偏高 ↑"], flagLow: ["low ↓", "偏低 ↓"], flagAbnormal: ["abnormal *", "异常 *"],
  };
  const t = (k, params) => {
    let s = (T[k] || [k, k])[zh ? 1 : 0];
    for (const [p, v] of Object.entries(params || {})) s = s.split("{" + p + "}").join(String(v));
    return s;
  };

  // Numbers of the draft keep the digits the report printed (5.60 stays 5.60): they are read
  // from the answer's source text and written back as such (JSON.parse source access and
  // JSON.rawJSON; a browser without them sends the number as JavaScript reads it).
  const DECIMALS = new Set(["valueNum", "refLow", "refHigh", "reportYear"]);
  class Raw { constructor(s) { this.s = s; } }
  const parseDraftJSON = (text) => JSON.parse(text, function (k, v, ctx) {
    if (typeof v === "number" && DECIMALS.has(k)) return new Raw(ctx && ctx.source ? ctx.source : String(v));
    return v;
  });
  const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
  const stringifyDraft = (draft, indent) => JSON.stringify(draft, (k, v) => {
    if (!(v instanceof Raw)) return v;
    return JSON.rawJSON ? JSON.rawJSON(v.s) : Number(v.s);
  }, indent);

  const meta = (name) => (document.querySelector('meta[name="' + name + '"]') || {}).content || "";
  const needsKey = meta("ocrdraft-auth") === "bearer";
  const embedders = meta("ocrdraft-embedders").split(/\s+/).filter(Boolean);
  const KEY = "ocrdraft.apiKey";

  const state = { files: [], job: "", progress: null, draft: null, fields: [], current: null, pageEls: new Map(), evidence: [], timer: 0 };

  function show(step) {
    for (const id of ["key-step", "choose-step", "progress-step", "review-step", "done-step"]) $(id).hidden = id !== step;
  }
  function fail(text) { const e = $("error"); e.textContent = text; e.hidden = !text; }

  function headers(json) {
    const h = { "Accept-Language": lang };
    if (json) h["Content-Type"] = "application/json";
    const key = sessionStorage.getItem(KEY);
    if (key) h.Authorization = "Bearer " + key;
    return h;
  }

  // call sends a request to this service and answers {status, text, headers}; a 401 asks for
  // the key again.
  async function call(path, init) {
    let res;
    try {
      res = await fetch(path, Object.assign({ credentials: "omit", cache: "no-store" }, init));
    } catch (e) {
      throw new Error(t("network"));
    }
    const text = await res.text();
    if (res.status === 401) {
      sessionStorage.removeItem(KEY);
      show("key-step");
      fail(t("keyRefused"));
      $("key").focus();
      throw null;
    }
    return { status: res.status, text, headers: res.headers };
  }
  function codeOf(r) { try { return JSON.parse(r.text).code || ""; } catch (e) { return ""; } }
  function problemText(r) {
    try { const p = JSON.parse(r.text); return t("failed", { status: r.status, detail: p.detail || p.title || p.code }); } catch (e) { return t("failed", { status: r.status, detail: "" }); }
  }

  // ---- choosing the pages
  function listFiles() {
    const ol = $("file-list");
    ol.replaceChildren(...state.files.map((f) => { const li = document.createElement("li"); li.textContent = f.name + " (" + Math.ceil(f.size / 1024) + " KiB)"; return li; }));
  }
  function addFiles(list) { for (const f of list) state.files.push(f); listFiles(); }

  // read sends the pages as a job (POST /v1/jobs), whose progress is pages done of pages, and
  // falls back to one /v1/extract request, whose progress cannot be told, when the service runs
  // no jobs (503 jobs_not_configured, or 404 from a server older than jobs).
  async function read(ev) {
    ev.preventDefault();
    if (!state.files.length) { fail(t("noFiles")); $("files").focus(); return; }
    fail("");
    const form = new FormData();
    for (const f of state.files) form.append("image", f, f.name);
    form.append("include", "pageImages");
    const h = headers(false);
    if ($("sex").value) h["Patient-Sex"] = $("sex").value;
    const started = Date.now();
    state.progress = null;
    const bar = $("progress-bar");
    bar.removeAttribute("value"); // indeterminate until a job says how far it is
    const tick = () => {
      const s = Math.floor((Date.now() - started) / 1000), p = state.progress;
      $("progress-text").textContent = p ? t("pagesDone", { done: p.done, pages: p.pages, s }) : t("reading", { n: state.files.length, s });
    };
    tick();
    state.timer = setInterval(tick, 1000);
    state.tick = tick;
    show("progress-step");
    try {
      let r = await readAsJob(form, h);
      if (!r) r = await call("/v1/extract", { method: "POST", headers: h, body: form });
      if (r.status !== 200) { show("choose-step"); fail(problemText(r)); return; }
      review(r.result || parseDraftJSON(r.text));
    } catch (e) {
      if (e) { show("choose-step"); fail(e.message); }
    } finally {
      clearInterval(state.timer);
      state.progress = null;
      // Once its result is shown (or it failed), the job and its result go from the service:
      // the draft lives in this tab alone.
      if (state.job) call(state.job, { method: "DELETE", headers: headers(false) }).catch(() => {});
      state.job = "";
    }
  }

  // A job's polls wait what its Retry-After says, within these bounds (ms).
  const POLL_MIN = 500, POLL_MAX = 10000, POLL_DEFAULT = 2000;
  const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
  function retryAfter(r) {
    const s = Number(r.headers && r.headers.get("Retry-After"));
    return Number.isFinite(s) && s >= 0 ? Math.min(POLL_MAX, Math.max(POLL_MIN, s * 1000)) : POLL_DEFAULT;
  }
  function progress(job) {
    state.progress = { done: job.pagesDone || 0, pages: job.pages || 0 };
    const bar = $("progress-bar");
    if (job.pages > 0) { bar.max = job.pages; bar.value = Math.min(job.pagesDone || 0, job.pages); }
    state.tick();
  }

  // readAsJob runs the read as a job (state.job its path, for read to delete) and answers
  // {status: 200, result} once it has succeeded, a problem's {status, text} for the page to
  // show, or null when the service runs no jobs.
  async function readAsJob(form, h) {
    let r = await call("/v1/jobs", { method: "POST", headers: h, body: form });
    if (r.status === 404 || (r.status === 503 && codeOf(r) === "jobs_not_configured")) return null;
    if (r.status !== 202 && r.status !== 200) return r;
    let job = parseDraftJSON(r.text);
    const loc = "/v1/jobs/" + encodeURIComponent(job.id);
    state.job = loc;
    for (;;) {
      progress(job);
      if (job.status === "succeeded") return { status: 200, result: job.result };
      if (job.status === "failed" || job.status === "canceled") {
        return { status: (job.error && job.error.status) || 500, text: JSON.stringify(job.error || {}) };
      }
      await sleep(retryAfter(r));
      r = await call(loc, { method: "GET", headers: headers(false) });
      if (r.status !== 200) return r;
      job = parseDraftJSON(r.text);
    }
  }

  // ---- the review: built once per draft
  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else if (k in e && typeof v !== "string") e[k] = v; else e.setAttribute(k, v);
    }
    e.append(...kids);
    return e;
  }
  const cell = (v) => (v instanceof Raw ? v.s : v == null ? "" : String(v));
  let fieldSeq = 0;

  // field makes the labelled input of one draft path.
  function field(path, name, value, label) {
    const id = "f" + (++fieldSeq);
    let input;
    if (name === "printedFlag") {
      input = el("select", { id });
      for (const [v, k] of [["", "flagNone"], ["high", "flagHigh"], ["low", "flagLow"], ["abnormal", "flagAbnormal"]]) input.append(el("option", { value: v, text: t(k) }));
      input.value = value == null ? "" : value;
    } else {
      input = el("input", { id, type: "text", value: cell(value), autocomplete: "off", spellcheck: "false" });
      if (DECIMALS.has(name)) input.setAttribute("inputmode", "decimal");
    }
    input.dataset.path = path;
    input.dataset.kind = name;
    state.fields.push(input);
    return { input, label: el("label", { for: id, text: label }) };
  }

  // review shows a result (/v1/extract's body, read by parseDraftJSON).
  function review(res) {
    const started = performance.now();
    state.draft = res.draft;
    state.evidence = (res.meta && res.meta.evidence) || [];
    state.fields = [];
    state.pageEls = new Map();
    state.current = null;
    const doc = $("doc-fields");
    doc.replaceChildren(el("legend", { text: t("report") }));
    for (const [name, key] of [["title", "title_"], ["hospital", "hospital"], ["checkupDate", "checkupDate"], ["reportYear", "reportYear"]]) {
      const f = field(name, name, state.draft[name], t(key));
      doc.append(el("div", { class: "field" }, f.label, f.input, el("span", { class: "notes" })));
    }
    // Pages: every page image, and every page a row names.
    const images = new Map((res.pageImages || []).map((p) => [p.page, p]));
    const pageNums = new Set(images.keys());
    state.draft.indicators.forEach((r) => pageNums.add(r.page || 1));
    const frag = document.createDocumentFragment();
    for (const n of [...pageNums].sort((a, b) => a - b)) frag.append(pageSection(n, images.get(n)));
    state.draft.indicators.forEach((r, i) => state.pageEls.get(r.page || 1).tbody.append(rowEl(r, i)));
    $("pages").replaceChildren(frag);
    drawn = -2;
    placeBoxes();
    $("general").replaceChildren();
    for (const w of res.warnings || []) note(w.path, w.message, false);
    pending();
    show("review-step");
    performance.measure("ocrdraft:review", { start: started }); // for the tests' log
    const first = invalid()[0];
    (first || state.fields[0]).focus();
  }

  function pageSection(n, img) {
    const sheet = el("div", { class: "sheet" });
    const boxes = el("div", { class: "boxes" });
    if (img) {
      const bytes = Uint8Array.from(atob(img.data), (c) => c.charCodeAt(0));
      const url = URL.createObjectURL(new Blob([bytes], { type: img.mediaType }));
      sheet.append(el("div", { class: "figure" }, el("img", { src: url, alt: t("pageImage", { n }), width: String(img.width), height: String(img.height) }), boxes));
    } else {
      sheet.append(el("p", { class: "noimage", text: t("noImage") }));
    }
    const head = el("tr", {}, ...["itemName", "valueNum", "valueText", "unit", "refLow", "refHigh", "refText", "printedFlag"].map((k) => el("th", { scope: "col", text: t(k) })));
    const tbody = el("tbody");
    const table = el("table", {}, el("caption", { class: "sr", text: t("page", { n }) }), el("thead", {}, head), tbody);
    state.pageEls.set(n, { boxes, tbody, img });
    return el("section", { class: "page", "data-page": String(n) }, el("h3", { text: t("page", { n }) }), sheet, el("div", { class: "rows-wrap" }, table));
  }

  function rowEl(r, i) {
    const tr = el("tr", { class: "row", tabindex: "-1" });
    tr.dataset.row = String(i);
    for (const k of ["itemName", "valueNum", "valueText", "unit", "refLow", "refHigh", "refText", "printedFlag"]) {
      const f = field("indicators[" + i + "]." + k, k, r[k], t(k) + ", " + t("row", { n: i + 1 }));
      f.label.className = "sr";
      tr.append(el("td", { class: k === "itemName" ? "name" : "" }, f.label, f.input));
    }
    const notes = el("tr", { class: "notes" }, el("td", { colspan: "8" }));
    notes.hidden = true;
    tr.notes = notes;
    const frag = document.createDocumentFragment();
    frag.append(tr, notes);
    return frag;
  }

  // target is the element a warning's or a problem's path belongs to: its field, the row's
  // name for a path of a row, the report's field for a page's own (pages[2].checkupDate).
  function target(path) {
    if (!path) return null;
    let f = state.fields.find((x) => x.dataset.path === path);
    if (f) return f;
    let m = /^indicators\[(\d+)\]$/.exec(path); // a row itself, as a model's box names it: its value
    if (m) return state.fields.find((x) => x.dataset.path === "indicators[" + m[1] + "].valueNum") || null;
    m = /^indicators\[(\d+)\]/.exec(path);
    if (m) return state.fields.find((x) => x.dataset.path === "indicators[" + m[1] + "].itemName") || null;
    m = /^pages\[\d+\]\.(\w+)$/.exec(path);
    if (m) return state.fields.find((x) => x.dataset.path === m[1]) || null;
    return null;
  }

  let noteSeq = 0;
  function note(path, message, problem) {
    const f = target(path);
    const id = "n" + (++noteSeq);
    const span = el("span", { id, class: "note" + (problem ? " problem" : ""), text: message });
    if (!f) { $("general").append(el("li", { class: problem ? "note problem" : "" }, span)); return; }
    const tr = f.closest("tr.row");
    const box = tr ? tr.notes.firstChild : f.parentElement.querySelector(".notes");
    if (tr) tr.notes.hidden = false;
    box.append(span);
    f.setAttribute("aria-invalid", "true");
    f.classList.remove("accepted");
    if (problem) f.classList.add("problem");
    const by = (f.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
    by.push(id);
    f.setAttribute("aria-describedby", by.join(" "));
  }

  const invalid = () => state.fields.filter((f) => f.getAttribute("aria-invalid") === "true" && !f.classList.contains("accepted"));
  function pending() { const n = invalid().length; $("pending").textContent = n ? t("pending", { n }) : ""; }

  // step moves to the next (or previous) field with a warning not yet accepted, from the
  // current one, wrapping around.
  function step(dir) {
    const list = invalid();
    if (!list.length) return;
    const from = state.current ? state.fields.indexOf(state.current) : -1;
    let next;
    if (dir > 0) next = list.find((f) => state.fields.indexOf(f) > from) || list[0];
    else next = [...list].reverse().find((f) => state.fields.indexOf(f) < from) || list[list.length - 1];
    next.focus();
    next.scrollIntoView({ block: "nearest" });
  }

  function focusRow(f) {
    state.current = f;
    const tr = f.closest("tr.row");
    document.querySelectorAll("tr.row.current").forEach((x) => x !== tr && x.classList.remove("current"));
    if (!tr) { drawBoxes(-1); return; }
    tr.classList.add("current");
    drawBoxes(Number(tr.dataset.row));
  }

  // placeBoxes puts every box of meta.evidence (a number found in a text layer, or a row as a
  // model boxed it; in the image's pixels) over its page image, once per draft: faint, so that a
  // person sees where each row is printed and can click one to reach its field.
  function placeBoxes() {
    state.boxEls = [];
    for (const ev of state.evidence) {
      const m = /^indicators\[(\d+)\]/.exec(ev.path || "");
      const p = state.pageEls.get(ev.page);
      if (!m || !p || !p.img || !ev.box) continue;
      const b = el("button", { type: "button", class: "box", "aria-label": t("box", { path: ev.path }) });
      b.dataset.path = ev.path;
      b.dataset.row = m[1];
      b.style.left = (100 * ev.box.x / p.img.width) + "%";
      b.style.top = (100 * ev.box.y / p.img.height) + "%";
      b.style.width = (100 * ev.box.w / p.img.width) + "%";
      b.style.height = (100 * ev.box.h / p.img.height) + "%";
      b.addEventListener("click", () => { const f = target(ev.path); if (f) f.focus(); });
      p.boxes.append(b);
      state.boxEls.push(b);
    }
  }

  // drawBoxes marks the focused row's boxes (row -1: none).
  let drawn = -2;
  function drawBoxes(row) {
    if (row === drawn) return;
    drawn = row;
    for (const b of state.boxEls || []) b.classList.toggle("current", b.dataset.row === String(row));
  }

  // ---- confirming
  function collect() {
    const d = state.draft;
    for (const f of state.fields) {
      const path = f.dataset.path, kind = f.dataset.kind;
      const m = /^indicators\[(\d+)\]\.(\w+)$/.exec(path);
      const obj = m ? d.indicators[Number(m[1])] : d;
      const v = f.value.trim();
      let out;
      if (v === "") out = null;
      else if (DECIMALS.has(kind)) out = NUMBER.test(v) ? new Raw(v) : v; // not a number: /v1/validate says so at its path
      else out = v;
      obj[kind] = out;
    }
    return d;
  }

  function clearProblems() {
    document.querySelectorAll(".note.problem").forEach((n) => {
      const id = n.id;
      for (const f of state.fields) {
        const by = (f.getAttribute("aria-describedby") || "").split(" ").filter((x) => x && x !== id);
        if (by.length) f.setAttribute("aria-describedby", by.join(" ")); else f.removeAttribute("aria-describedby");
        if (!by.length) f.removeAttribute("aria-invalid");
        if (f.classList.contains("problem") && !by.some((x) => { const e = $(x); return e && e.classList.contains("problem") && e !== n; })) f.classList.remove("problem");
      }
      (n.closest("li") || n).remove();
    });
  }

  async function confirm() {
    fail("");
    clearProblems();
    const body = stringifyDraft(collect());
    let r;
    try {
      r = await call("/v1/validate", { method: "POST", headers: headers(true), body });
    } catch (e) {
      if (e) fail(e.message);
      return;
    }
    if (r.status === 422) {
      let p = {};
      try { p = JSON.parse(r.text); } catch (e) { /* not a problem document */ }
      const errs = p.errors || [];
      if (!errs.length) { fail(problemText(r)); return; }
      for (const e of errs) note(e.path, e.message, true);
      fail(t("problems", { n: errs.length }));
      pending();
      const first = state.fields.find((f) => f.classList.contains("problem"));
      if (first) first.focus();
      return;
    }
    if (r.status !== 200) { fail(problemText(r)); return; }
    done(parseDraftJSON(r.text).draft);
  }

  function done(draft) {
    const json = stringifyDraft(draft, 2);
    $("done-json").textContent = json;
    state.json = json;
    const parent = embedder();
    $("done-text").textContent = t(parent ? "confirmedSent" : "confirmed");
    if (parent) window.parent.postMessage({ type: "ocrdraft.confirmed", draft: JSON.parse(json), json }, parent);
    show("done-step");
    $("done-text").focus();
  }

  // embedder is the origin of the page that frames this one, when it is one of
  // OCR_REVIEW_EMBEDDERS (the CSP's frame-ancestors let no other frame it): the one origin a
  // confirmed draft is posted to, never "*".
  function embedder() {
    if (window.parent === window || !embedders.length) return "";
    let origin = "";
    if (location.ancestorOrigins && location.ancestorOrigins.length) origin = location.ancestorOrigins[0];
    else if (document.referrer) { try { origin = new URL(document.referrer).origin; } catch (e) { origin = ""; } }
    if (embedders.includes(origin)) return origin;
    return embedders.length === 1 ? embedders[0] : ""; // postMessage delivers only to that origin
  }

  function download() {
    const url = URL.createObjectURL(new Blob([state.json], { type: "application/json" }));
    const a = el("a", { href: url, download: "draft.json" });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
  async function copy() {
    try {
      await navigator.clipboard.writeText(state.json);
    } catch (e) {
      const r = document.createRange();
      r.selectNodeContents($("done-json"));
      const s = getSelection();
      s.removeAllRanges();
      s.addRange(r);
      document.execCommand("copy");
    }
    $("copied").textContent = t("copied");
  }

  function restart() {
    for (const p of state.pageEls.values()) if (p.img) { const i = p.boxes.previousSibling; if (i && i.src) URL.revokeObjectURL(i.src); }
    state.files = []; state.draft = null; state.fields = []; state.json = ""; drawn = -2;
    $("pages").replaceChildren(); $("done-json").textContent = ""; $("files").value = ""; $("copied").textContent = "";
    listFiles();
    fail("");
    show("choose-step");
    $("files").focus();
  }

  // ---- keys
  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const inField = e.target instanceof HTMLElement && e.target.matches("input, select, textarea");
    const inReview = !$("review-step").hidden;
    if (inField && inReview && e.target.dataset.path) {
      if (e.key === "Enter") {
        e.preventDefault();
        e.target.classList.add("accepted");
        state.current = e.target;
        pending();
        step(1);
      } else if (e.key === "Escape") {
        e.preventDefault();
        const tr = e.target.closest("tr.row");
        (tr || $("review-title")).focus();
      }
      return;
    }
    if (inField) return;
    if (e.key === "?") { toggleKeys(); e.preventDefault(); return; }
    if (!inReview) return;
    if (e.key === "j" || e.key === "k") {
      e.preventDefault();
      swallow = e.key; // the field it moves to must not get the letter as text
      step(e.key === "j" ? 1 : -1);
    }
  }
  // swallow is the j or k that just moved the focus into a field: its keypress and text input,
  // when they come apart from the keydown (as a synthetic key or an input method sends them),
  // are dropped there.
  let swallow = null;
  function dropSwallowed(e) {
    if (swallow && (e.key === swallow || e.data === swallow)) { e.preventDefault(); swallow = null; }
  }
  function toggleKeys() {
    const k = $("keys");
    k.hidden = !k.hidden;
    $("help-toggle").setAttribute("aria-expanded", String(!k.hidden));
  }

  // ---- start
  document.documentElement.lang = lang;
  document.title = t("title");
  document.querySelectorAll("[data-t]").forEach((e) => { e.textContent = t(e.dataset.t); });
  $("review-title").tabIndex = -1;
  $("done-text").tabIndex = -1;
  $("help-toggle").addEventListener("click", toggleKeys);
  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const v = $("key").value.trim();
    if (!v) return;
    sessionStorage.setItem(KEY, v);
    $("key").value = "";
    fail("");
    show(state.draft ? "review-step" : "choose-step");
  });
  $("choose-form").addEventListener("submit", read);
  $("files").addEventListener("change", (e) => { addFiles(e.target.files); e.target.value = ""; });
  $("clear").addEventListener("click", () => { state.files = []; listFiles(); });
  // A file dropped beside the drop zone would replace the page (and the draft) with itself.
  document.addEventListener("dragover", (e) => e.preventDefault());
  document.addEventListener("drop", (e) => e.preventDefault());
  const drop = $("drop");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => { e.preventDefault(); drop.classList.remove("over"); addFiles(e.dataTransfer.files); });
  // A box keeps the boxes as they are (its click focuses its field); a field draws its row's.
  $("pages").addEventListener("focusin", (e) => { if (e.target.matches("input, select")) focusRow(e.target); else if (e.target.matches("tr.row")) drawBoxes(Number(e.target.dataset.row)); });
  $("doc-fields").addEventListener("focusin", (e) => { if (e.target.matches("input")) focusRow(e.target); });
  $("confirm").addEventListener("click", confirm);
  $("restart").addEventListener("click", restart);
  $("again").addEventListener("click", restart);
  $("download").addEventListener("click", download);
  $("copy").addEventListener("click", copy);
  document.addEventListener("keydown", onKey);
  document.addEventListener("keypress", dropSwallowed, true);
  document.addEventListener("beforeinput", dropSwallowed, true);
  document.addEventListener("keyup", () => { swallow = null; });
  if (needsKey && !sessionStorage.getItem(KEY)) { show("key-step"); $("key").focus(); } else { show("choose-step"); }
})();
