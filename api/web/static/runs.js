// estibench run pages: the runs table (/runs), one run (/runs/{id}) and runs side by side (/runs/compare). Every
// figure and value comes from the API, called with the key of the header's sign-in (app.js: apiKey, apiFetch,
// showImage), kept in this tab's sessionStorage and never put in a URL or a cookie. Text is set with textContent
// only.
"use strict";

const MAX_RESULT_COLUMNS = 12;
const MAX_COMPARED = 8;

function el(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  return node;
}

// A JSON value as one cell's text: strings as they are, anything else as JSON (long lists cut).
function cellText(value) {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  const text = JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

// A JSON object flattened to dotted paths; lists are leaves.
function leaves(value, prefix = "", out = {}) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    out[prefix] = value;
    return out;
  }
  for (const [key, inner] of Object.entries(value)) leaves(inner, prefix ? `${prefix}.${key}` : key, out);
  return out;
}

function isScalar(value) {
  return value === null || ["number", "string", "boolean"].includes(typeof value);
}

async function problemText(response) {
  try {
    const body = await response.json();
    return `${response.status} ${body.title || ""}: ${body.detail || ""}`;
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

// The page follows the header's sign-in (app.js): ``onChange`` runs whenever the tab's key changes.
function setupKey(onChange) {
  const show = () => keyState(apiKey() ? "" : "no key: runs made without one");
  onKeyChange(() => {
    show();
    onChange();
  });
  show();
}

// ----------------------------------------------------------------------------------------------- /runs

function setupRunsTable(box) {
  const form = document.getElementById("runs-filter");
  const table = document.getElementById("runs-table");
  const status = document.getElementById("runs-status");
  const more = document.getElementById("runs-more");
  const compare = document.getElementById("runs-compare");
  const selected = new Set();
  let cursor = null;
  let rows = [];

  for (const [name, value] of new URLSearchParams(window.location.search)) {
    const field = form.elements.namedItem(name);
    if (!field) continue;
    field.value = name === "filter" && field.value ? `${field.value}\n${value}` : value;
  }

  function query() {
    const params = new URLSearchParams();
    for (const name of ["name", "kind", "owner", "created_from", "created_to", "sort", "order"]) {
      const value = form.elements.namedItem(name).value.trim();
      if (value) params.set(name, value);
    }
    for (const line of form.elements.namedItem("filter").value.split("\n")) {
      if (line.trim()) params.append("filter", line.trim());
    }
    return params;
  }

  function sortBy(field) {
    const sort = form.elements.namedItem("sort");
    const order = form.elements.namedItem("order");
    order.value = sort.value === field && order.value === "desc" ? "asc" : "desc";
    sort.value = field;
    load(false);
  }

  function header(resultPaths) {
    const sort = form.elements.namedItem("sort").value;
    const arrow = form.elements.namedItem("order").value === "asc" ? " ▲" : " ▼";
    const tr = el("tr");
    tr.append(el("th", "compare"), el("th", "run"), el("th", "name"));
    const created = el("th", `created${sort === "created_at" ? arrow : ""}`, { "data-sort": "created_at" });
    tr.append(created, el("th", "ms"), el("th", "tags"), el("th", "note"));
    for (const path of resultPaths) {
      const field = `result.${path}`;
      tr.append(el("th", `${path}${sort === field ? arrow : ""}`, { "data-sort": field }));
    }
    for (const th of tr.querySelectorAll("th[data-sort]")) {
      th.classList.add("sortable");
      th.addEventListener("click", () => sortBy(th.dataset.sort));
    }
    table.tHead.replaceChildren(tr);
  }

  function resultColumns() {
    const names = new Set(rows.map((r) => r.name));
    if (names.size !== 1) return [];
    const paths = [];
    for (const run of rows) {
      for (const [path, value] of Object.entries(leaves(run.result))) {
        if (isScalar(value) && !paths.includes(path) && paths.length < MAX_RESULT_COLUMNS) paths.push(path);
      }
    }
    return paths;
  }

  function render() {
    const paths = resultColumns();
    header(paths);
    const body = table.tBodies[0];
    body.replaceChildren();
    for (const run of rows) {
      const tr = el("tr", undefined, { "data-run": run.id });
      const tick = el("input", undefined, { type: "checkbox", "aria-label": `compare ${run.id}` });
      tick.checked = selected.has(run.id);
      tick.addEventListener("change", () => {
        if (tick.checked) selected.add(run.id);
        else selected.delete(run.id);
        compare.disabled = selected.size < 2 || selected.size > MAX_COMPARED;
      });
      const check = el("td");
      check.append(tick);
      const link = el("a", run.id.slice(0, 8), { href: `/runs/${run.id}`, title: run.id });
      const idCell = el("td");
      idCell.append(link);
      const tags = Object.entries(run.tags).map(([k, v]) => `${k}=${v}`).join(", ");
      tr.append(check, idCell, el("td", run.name), el("td", run.created_at), el("td", run.duration_ms.toFixed(1)));
      tr.append(el("td", tags), el("td", run.note || ""));
      const flat = leaves(run.result);
      for (const path of paths) tr.append(el("td", cellText(flat[path]), { class: "value" }));
      body.append(tr);
    }
  }

  async function load(append) {
    const params = query();
    window.history.replaceState(null, "", `/runs?${params}`);
    if (append && cursor) params.set("cursor", cursor);
    status.textContent = "loading…";
    const response = await apiFetch(`/v1/runs?${params}`);
    if (!response.ok) {
      status.textContent = await problemText(response);
      rows = [];
      render();
      more.hidden = true;
      return;
    }
    const page = await response.json();
    rows = append ? rows.concat(page.items) : page.items;
    cursor = page.next_cursor;
    more.hidden = !cursor;
    status.textContent = `${rows.length} run${rows.length === 1 ? "" : "s"}${cursor ? " (more below)" : ""}`;
    render();
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    load(false);
  });
  more.addEventListener("click", () => load(true));
  compare.addEventListener("click", () => {
    window.location.href = `/runs/compare?ids=${[...selected].join(",")}`;
  });
  setupKey(() => load(false));
  box.dataset.ready = "1";
  load(false);
}

// ----------------------------------------------------------------------------------------------- /runs/{id}

function fieldRows(tbody, object) {
  tbody.replaceChildren();
  for (const [path, value] of Object.entries(leaves(object))) {
    const tr = el("tr", undefined, { "data-field": path });
    tr.append(el("th", path), el("td", cellText(value), { class: "value" }));
    tbody.append(tr);
  }
}

async function download(runId, name) {
  const response = await apiFetch(`/v1/runs/${runId}/artifacts/${encodeURIComponent(name)}`);
  if (!response.ok) return;
  const blob = await response.blob();
  const reader = new FileReader();
  reader.onload = () => {
    const link = el("a", undefined, { href: reader.result, download: name });
    link.click();
  };
  reader.readAsDataURL(blob);
}

function setupRun(box) {
  const runId = box.dataset.run;
  const status = document.getElementById("run-status");

  async function load() {
    const response = await apiFetch(`/v1/runs/${runId}`);
    if (!response.ok) {
      status.textContent =
        response.status === 404
          ? "this run is not one your key may see (enter the key it was made with)"
          : await problemText(response);
      return;
    }
    const run = await response.json();
    status.textContent = `${run.kind} ${run.name}, version ${run.version}`;
    document.getElementById("run-meta").textContent =
      `made ${run.created_at} in ${run.duration_ms.toFixed(1)} ms · params SHA-256 ${run.params_sha256}`;
    const again = document.getElementById("run-again");
    if (run.kind === "estimator") {
      again.href = `/estimators/${encodeURIComponent(run.name)}?from_run=${run.id}`;
      again.hidden = false;
    }
    const tags = document.getElementById("run-tags");
    tags.replaceChildren(...Object.entries(run.tags).map(([k, v]) => el("li", `${k}=${v}`)));
    document.getElementById("run-note").textContent = run.note || (apiKey() ? "no note" : "tags and notes belong to a key");
    fieldRows(document.querySelector("#run-params tbody"), run.params);
    fieldRows(document.querySelector("#run-result tbody"), run.result);
    const list = document.getElementById("run-artifacts");
    list.replaceChildren();
    for (const name of run.artifacts) {
      const button = el("button", name, { type: "button", class: "secondary" });
      button.addEventListener("click", () => download(run.id, name));
      const item = el("li");
      item.append(button);
      list.append(item);
    }
    document.getElementById("run-artifacts-box").hidden = run.artifacts.length === 0;
    const plotBox = document.getElementById("run-plot-box");
    plotBox.hidden = !(run.kind === "estimator" && (await showImage(document.getElementById("run-plot"), `/v1/runs/${run.id}/plot`)));
    box.dataset.ready = "1";
  }

  setupKey(load);
  load();
}

// ----------------------------------------------------------------------------------------------- /runs/compare

function sideBySide(table, runs, values) {
  const head = el("tr");
  head.append(el("th", "field"));
  runs.forEach((run, i) => {
    const th = el("th");
    th.append(el("a", `run ${i + 1} (${run.id.slice(0, 8)})`, { href: `/runs/${run.id}` }));
    head.append(th);
  });
  table.tHead.replaceChildren(head);
  const body = table.tBodies[0];
  body.replaceChildren();
  for (const [path, column] of Object.entries(values)) {
    const differ = new Set(column.map((v) => JSON.stringify(v))).size > 1;
    const tr = el("tr", undefined, { "data-field": path });
    if (differ) tr.classList.add("differs");
    tr.append(el("th", path));
    for (const value of column) tr.append(el("td", cellText(value), { class: "value" }));
    body.append(tr);
  }
  if (Object.keys(values).length === 0) {
    const tr = el("tr");
    tr.append(el("td", "none", { colspan: String(runs.length + 1) }));
    body.append(tr);
  }
}

function setupCompare(box) {
  const ids = box.dataset.ids;
  const status = document.getElementById("compare-status");

  async function load() {
    const query = new URLSearchParams({ ids });
    const response = await apiFetch(`/v1/runs/compare?${query}`);
    if (!response.ok) {
      status.textContent = await problemText(response);
      return;
    }
    const found = await response.json();
    status.textContent =
      `${found.runs.length} runs of ${found.kind} ${found.name}` +
      (found.versions_differ ? " — made by different versions: results may differ for that reason alone" : "");
    sideBySide(document.getElementById("compare-params"), found.runs, found.params);
    sideBySide(document.getElementById("compare-result"), found.runs, found.result);
    const plotBox = document.getElementById("compare-plot-box");
    const note = document.getElementById("compare-plot-note");
    const plotUrl = `/v1/runs/compare/plot?${query}`;
    const drawn = found.kind === "estimator" && (await showImage(document.getElementById("compare-plot"), plotUrl));
    plotBox.hidden = !drawn;
    note.hidden = drawn;
    note.textContent = drawn ? "" : `no overlay: the plot of ${found.name} is not curves, or it has none`;
    box.dataset.ready = "1";
  }

  setupKey(load);
  load();
}

const runsBox = document.getElementById("runs-table");
if (runsBox) setupRunsTable(runsBox);
const runBox = document.getElementById("run");
if (runBox) setupRun(runBox);
const compareBox = document.getElementById("compare");
if (compareBox) setupCompare(compareBox);
