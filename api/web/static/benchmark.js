// estibench benchmark page: with the key of the header's sign-in (app.js: apiKey, apiFetch, whoAmI, onKeyChange),
// kept in this tab's sessionStorage and sent only as an Authorization header, it shows a split the page could not
// show without a key (the private split is for the benchmark's owners and admins), a participant's submission form
// (a .json or .jsonl file, errors per field and per line) and its own submissions, and for the owners every
// submission with both splits, per-item values, paired comparisons, the participants (invite, revoke) and the audit
// log. Text is set with textContent only.
"use strict";

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
}

// A value as the server-rendered table prints it (%.4g).
function fourDigits(x) {
  return Number(Number(x).toPrecision(4)).toString();
}

function boardRow(r, metric) {
  const s = r.scores[metric];
  const tr = document.createElement("tr");
  if (r.baseline) tr.className = "baseline";
  const interval = s && s.ci_low !== null ? `[${fourDigits(s.ci_low)}, ${fourDigits(s.ci_high)}]` : "";
  tr.append(
    cell(r.rank === null ? "baseline" : String(r.rank)),
    cell(r.model),
    cell(s ? fourDigits(s.value) : ""),
    cell(interval),
    cell(s && s.n !== null ? String(s.n) : ""),
    cell(`v${r.answer_key_version}${r.pending ? " (pending rescore)" : ""}`),
    cell(r.submitted_at),
    cell(r.participant || ""),
  );
  tr.cells[1].className = "model";
  tr.cells[2].className = "value";
  return tr;
}

async function showRestricted(box) {
  const table = document.getElementById("leaderboard");
  const body = table.querySelector("tbody");
  table.hidden = true;
  body.replaceChildren();
  document.getElementById("restricted-notice").hidden = false;
  if (!apiKey()) {
    keyState("not signed in: sign in above with an owner's key to see this split");
    return;
  }
  const query = new URLSearchParams({ split: box.dataset.split, metric: box.dataset.metric, limit: "100" });
  const response = await apiFetch(`/v1/benchmarks/${encodeURIComponent(box.dataset.benchmark)}/leaderboard?${query}`);
  if (response.status === 401) {
    keyState("this key is invalid or revoked");
    return;
  }
  if (response.status === 403) {
    keyState("this key is not one of the benchmark's owners: the split stays hidden");
    return;
  }
  if (!response.ok) {
    keyState(`the leaderboard could not be read (${response.status})`);
    return;
  }
  const board = await response.json();
  for (const r of board.items) body.append(boardRow(r, board.metric));
  table.hidden = board.items.length === 0;
  document.getElementById("restricted-notice").hidden = true;
  keyState(board.items.length
    ? `${board.items.length} row${board.items.length === 1 ? "" : "s"} shown with the key of this tab`
    : "the key may see this split; it has no rows yet");
}

function setupRestricted(box) {
  onKeyChange(() => showRestricted(box));
  showRestricted(box);
}

const restricted = document.getElementById("restricted");
if (restricted) setupRestricted(restricted);

// ------------------------------------------------------------------------------------------- the challenge

function el(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  return node;
}

async function problemOf(response) {
  try {
    const body = await response.json();
    return { text: `${response.status} ${body.title || ""}: ${body.detail || ""}`, errors: body.errors || [] };
  } catch {
    return { text: `${response.status} ${response.statusText}`, errors: [] };
  }
}

// Where a submission's field error points: the model field, or a line of a .jsonl file / an item of a .json one.
function errorPlace(loc, lines) {
  const [where, first, ...rest] = loc;
  if (first === "model" && (where === "query" || where === "body")) return { field: "model", text: "" };
  if (first === "metadata") return { field: "file", text: "metadata" };
  if (lines && where === "body" && typeof first === "number") {
    return { field: "file", text: `line ${first}${rest.length ? `: ${rest.join(".")}` : ""}` };
  }
  if (!lines && where === "body" && first === "predictions" && rest[0] === "items" && typeof rest[1] === "number") {
    const inner = rest.slice(2);
    return { field: "file", text: `item ${rest[1] + 1}${inner.length ? `: ${inner.join(".")}` : ""}` };
  }
  return { field: "file", text: loc.join(".") };
}

// The request a chosen file makes: JSON Lines as they are (model in the query), a .json file as the JSON body.
async function submissionRequest(benchmark, model, file) {
  const text = await file.text();
  const url = `/v1/benchmarks/${encodeURIComponent(benchmark)}/submissions`;
  if (file.name.endsWith(".jsonl")) {
    const query = new URLSearchParams({ model });
    const init = { headers: { "content-type": "application/x-ndjson" }, body: text };
    return { lines: true, url: `${url}?${query}`, init };
  }
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { error: `not valid JSON: ${err.message}` };
  }
  const items = Array.isArray(parsed) ? parsed : parsed && parsed.items;
  if (!Array.isArray(items)) return { error: "expected a JSON list of items or an object with an items list" };
  const body = JSON.stringify({ model, predictions: { items } });
  return { lines: false, url, init: { headers: { "content-type": "application/json" }, body } };
}

function setupSubmitForm(box, reload) {
  const form = document.getElementById("submit-form");
  const status = document.getElementById("submit-status");
  const list = document.getElementById("submit-errors");
  const fieldError = {
    model: document.getElementById("submit-model-error"),
    file: document.getElementById("submit-file-error"),
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    list.replaceChildren();
    for (const node of Object.values(fieldError)) node.textContent = "";
    status.textContent = "";
    const model = form.elements.model.value.trim();
    const file = form.elements.file.files[0];
    if (!model) fieldError.model.textContent = "a model name is required";
    if (!file) fieldError.file.textContent = "choose a .json or .jsonl file";
    if (!model || !file) return;
    const request = await submissionRequest(box.dataset.benchmark, model, file);
    if (request.error) {
      fieldError.file.textContent = request.error;
      return;
    }
    status.textContent = "submitting…";
    const response = await apiFetch(request.url, { method: "POST", ...request.init });
    if (response.ok) {
      const made = await response.json();
      const score = made.scores[box.dataset.metric];
      const value = score ? fourDigits(score.value) : "—";
      const late = made.late ? " (late: stored, never ranked)" : "";
      status.textContent = `submitted ${made.model}${late}: public ${box.dataset.metric} ${value}`;
      form.elements.file.value = "";
      reload();
      return;
    }
    const problem = await problemOf(response);
    status.textContent = problem.text;
    let fileErrors = 0;
    for (const e of problem.errors) {
      const place = errorPlace(e.loc || [], request.lines);
      if (place.field === "model") fieldError.model.textContent = e.msg;
      else {
        fileErrors += 1;
        list.append(el("li", `${place.text}: ${e.msg}`, { "data-loc": (e.loc || []).join(".") }));
      }
    }
    if (fileErrors) {
      fieldError.file.textContent = `${fileErrors} error${fileErrors === 1 ? "" : "s"} in the file (listed below)`;
    }
  });
}

function scoreText(scores, metric) {
  const s = scores && scores[metric];
  return s ? fourDigits(s.value) : "";
}

function fillSelect(select, subs) {
  const kept = select.value;
  select.replaceChildren(...subs.map((s) => el("option", `${s.model} · ${s.id.slice(0, 8)}`, { value: s.id })));
  if (subs.some((s) => s.id === kept)) select.value = kept;
}

async function showSubmissions(box, owner) {
  const status = document.getElementById("submissions-status");
  const body = document.querySelector("#submissions tbody");
  const url = `/v1/benchmarks/${encodeURIComponent(box.dataset.benchmark)}/submissions?limit=100`;
  const response = await apiFetch(url);
  if (!response.ok) {
    status.textContent = (await problemOf(response)).text;
    body.replaceChildren();
    return [];
  }
  const subs = (await response.json()).items;
  const metric = box.dataset.metric;
  body.replaceChildren(
    ...subs.map((s) => {
      const tr = el("tr", undefined, { "data-submission": s.id });
      const flags = [
        s.withdrawn_at ? "withdrawn" : "",
        s.baseline ? "baseline" : "",
        s.public ? "" : "not public",
        s.late ? "late (unranked)" : "",
      ];
      tr.append(
        el("td", s.submitted_at),
        el("td", s.model, { class: "model" }),
        el("td", s.participant || ""),
        el("td", scoreText(s.scores, metric), { class: "value" }),
        el("td", s.private ? scoreText(s.private.scores, metric) : "owners only", { class: "value" }),
        el("td", flags.filter(Boolean).join(", ")),
        el("td", s.id.slice(0, 8)),
      );
      return tr;
    }),
  );
  document.getElementById("submissions-title").textContent = owner
    ? "Every submission (you own this benchmark)"
    : "Your submissions";
  status.textContent = subs.length ? `${subs.length} submission${subs.length === 1 ? "" : "s"}` : "none yet";
  for (const name of ["items-form", "compare-form"]) {
    const form = document.getElementById(name);
    const selects = form.querySelectorAll("select[name=submission], select[name=a], select[name=b]");
    for (const select of selects) fillSelect(select, subs);
  }
  const compare = document.getElementById("compare-form");
  if (subs.length > 1 && compare.elements.a.value === compare.elements.b.value) compare.elements.b.value = subs[1].id;
  return subs;
}

async function itemValues(submission, metric) {
  const query = new URLSearchParams({ metric });
  const response = await apiFetch(`/v1/submissions/${encodeURIComponent(submission)}/items?${query}`);
  if (!response.ok) return { problem: (await problemOf(response)).text };
  return response.json();
}

function setupItems() {
  const form = document.getElementById("items-form");
  const status = document.getElementById("items-status");
  const table = document.getElementById("items");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const { submission, metric, split, filter } = form.elements;
    if (!submission.value) {
      status.textContent = "no submission to show";
      return;
    }
    const found = await itemValues(submission.value, metric.value);
    if (found.problem) {
      status.textContent = found.problem;
      table.hidden = true;
      return;
    }
    const needle = filter.value.trim();
    const shown = found.items.filter((i) => (!split.value || i.split === split.value) && i.item_id.includes(needle));
    table.tBodies[0].replaceChildren(
      ...shown.map((i) => {
        const tr = el("tr", undefined, { "data-item": i.item_id });
        tr.append(el("td", i.item_id), el("td", i.split), el("td", fourDigits(i.value), { class: "value" }));
        return tr;
      }),
    );
    table.hidden = false;
    status.textContent =
      `${shown.length} of ${found.items.length} items (${found.metric}, answer key v${found.answer_key_version})`;
  });
}

function setupCompare(box) {
  const form = document.getElementById("compare-form");
  const status = document.getElementById("compare-status");
  const table = document.getElementById("compare-items");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const { a, b, split, metric } = form.elements;
    table.hidden = true;
    const query = new URLSearchParams({ a: a.value, b: b.value, split: split.value, metric: metric.value });
    const response = await apiFetch(`/v1/benchmarks/${encodeURIComponent(box.dataset.benchmark)}/compare?${query}`);
    if (!response.ok) {
      status.textContent = (await problemOf(response)).text;
      return;
    }
    const found = await response.json();
    const p = found.result.p_value;
    status.textContent =
      `${found.test} on ${found.n_common} common ${found.split} items: mean A ${fourDigits(found.mean_a)}, ` +
      `mean B ${fourDigits(found.mean_b)}, p = ${p === null || p === undefined ? "—" : fourDigits(p)}`;
    const [va, vb] = await Promise.all([itemValues(a.value, metric.value), itemValues(b.value, metric.value)]);
    if (va.problem || vb.problem) return;
    const of = (found) => new Map(found.items.filter((i) => i.split === split.value).map((i) => [i.item_id, i.value]));
    const [ma, mb] = [of(va), of(vb)];
    const differ = [...ma.keys()].filter((id) => mb.has(id) && ma.get(id) !== mb.get(id)).sort();
    table.tBodies[0].replaceChildren(
      ...differ.map((id) => {
        const tr = el("tr", undefined, { "data-item": id });
        tr.append(
          el("td", id),
          el("td", fourDigits(ma.get(id)), { class: "value" }),
          el("td", fourDigits(mb.get(id)), { class: "value" }),
        );
        return tr;
      }),
    );
    table.hidden = false;
    status.textContent += ` · ${differ.length} item${differ.length === 1 ? "" : "s"} differ`;
  });
}

async function showParticipants(box) {
  const response = await apiFetch(`/v1/benchmarks/${encodeURIComponent(box.dataset.benchmark)}/participants?limit=100`);
  if (!response.ok) return false;
  const body = document.querySelector("#participants tbody");
  body.replaceChildren(
    ...(await response.json()).items.map((p) => {
      const tr = el("tr", undefined, { "data-participant": p.id });
      const action = el("td");
      if (!p.revoked_at) {
        const revoke = el("button", "Revoke", { type: "button", class: "secondary" });
        revoke.addEventListener("click", async () => {
          const bench = encodeURIComponent(box.dataset.benchmark);
          const done = await apiFetch(`/v1/benchmarks/${bench}/participants/${encodeURIComponent(p.id)}`, {
            method: "DELETE",
          });
          document.getElementById("invite-status").textContent = done.ok
            ? `${p.display_name}'s key is revoked`
            : (await problemOf(done)).text;
          showOwner(box);
        });
        action.append(revoke);
      }
      tr.append(
        el("td", p.display_name),
        el("td", p.team || ""),
        el("td", p.key_id.slice(0, 8)),
        el("td", p.created_at),
        el("td", p.revoked_at || ""),
        action,
      );
      return tr;
    }),
  );
  return true;
}

async function showAudit(box) {
  const response = await apiFetch(`/v1/benchmarks/${encodeURIComponent(box.dataset.benchmark)}/audit?limit=50`);
  if (!response.ok) return;
  const body = document.querySelector("#audit tbody");
  body.replaceChildren(
    ...(await response.json()).items.map((e) => {
      const tr = el("tr", undefined, { "data-action": e.action });
      tr.append(
        el("td", e.at),
        el("td", e.action),
        el("td", e.subject || ""),
        el("td", (e.actor_key_id || "").slice(0, 8)),
        el("td", JSON.stringify(e.details)),
      );
      return tr;
    }),
  );
}

// The owners' part: participants and the audit log; whether the key owns the benchmark.
async function showOwner(box) {
  const owner = await showParticipants(box);
  document.getElementById("owner").hidden = !owner;
  if (owner) await showAudit(box);
  return owner;
}

function setupInvite(box) {
  const form = document.getElementById("invite-form");
  const status = document.getElementById("invite-status");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = form.elements.display_name.value.trim();
    const team = form.elements.team.value.trim();
    const body = { display_name: name, ...(team ? { team } : {}) };
    const response = await apiFetch(`/v1/benchmarks/${encodeURIComponent(box.dataset.benchmark)}/participants`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) {
      const problem = await problemOf(response);
      const fields = problem.errors.map((e) => `${(e.loc || []).slice(1).join(".")}: ${e.msg}`);
      status.textContent = [problem.text, ...fields].join(" · ");
      return;
    }
    const made = await response.json();
    document.getElementById("invited-key").textContent = made.key;
    document.getElementById("invited").hidden = false;
    status.textContent = `${made.display_name} is invited`;
    form.reset();
    showOwner(box);
  });
}

function setupChallenge(box) {
  let owner = false;
  const reload = async () => {
    await Promise.all([showSubmissions(box, owner), refreshPhases()]);
    if (owner) await showAudit(box);
    box.dataset.ready = String(Number(box.dataset.ready || 0) + 1);
  };
  const load = async () => {
    const self = await whoAmI();
    const signedIn = self !== null;
    document.getElementById("challenge-signin").hidden = signedIn;
    document.getElementById("participate").hidden = !signedIn;
    document.getElementById("submissions-box").hidden = !signedIn;
    document.getElementById("invited").hidden = true;
    const messages = ["submit-status", "submit-model-error", "submit-file-error", "invite-status", "items-status"];
    for (const id of [...messages, "compare-status"]) document.getElementById(id).textContent = "";
    document.getElementById("submit-form").reset();
    document.getElementById("submit-errors").replaceChildren();
    for (const id of ["items", "compare-items"]) document.getElementById(id).hidden = true;
    owner = signedIn && (await showOwner(box));
    if (!signedIn) document.getElementById("owner").hidden = true;
    if (signedIn) await showSubmissions(box, owner);
    box.dataset.ready = String(Number(box.dataset.ready || 0) + 1);
  };
  setupSubmitForm(box, reload);
  setupItems();
  setupCompare(box);
  setupInvite(box);
  onKeyChange(load);
  load();
}

// ------------------------------------------------------------------------------------------------ phases

// A duration as days, hours, minutes and seconds ("2 d 3 h 4 min 5 s"; no days when under one).
function durationText(ms) {
  const total = Math.max(0, Math.floor(ms / 1000));
  const [d, h] = [Math.floor(total / 86400), Math.floor(total / 3600) % 24];
  const [m, s] = [Math.floor(total / 60) % 60, total % 60];
  return `${d ? `${d} d ` : ""}${h} h ${m} min ${s} s`;
}

const PHASE_ORDER = { upcoming: 0, open: 1, ended: 2 };

// A phase's status now: its times against this browser's clock, or the server's status at the last read when that
// is further on; with the countdown to its next edge.
function phaseStatus(phase, now) {
  const starts = Date.parse(phase.starts_at);
  const ends = Date.parse(phase.ends_at);
  const here = now < starts ? "upcoming" : now < ends ? "open" : "ended";
  const status = PHASE_ORDER[phase.status] > PHASE_ORDER[here] ? phase.status : here;
  if (status === "upcoming") return { status, text: `upcoming · starts in ${durationText(starts - now)}` };
  if (status === "open") return { status, text: `open · ends in ${durationText(ends - now)}` };
  return { status, text: phase.frozen_at ? `ended · frozen at ${phase.frozen_at}` : "ended" };
}

// Every split the phase shows, read with the tab's key: { state, text, boards } where state is "upcoming" (not
// read), "live" (open), "frozen" (ended: the stored snapshot), "hidden" (a hidden_until_end phase before its end,
// for anyone but its owners) or "error".
async function phaseBoards(benchmark, phase) {
  if (phase.status === "upcoming") {
    return { state: "upcoming", text: `the board opens with the phase, at ${phase.starts_at}`, boards: [] };
  }
  const url = `/v1/benchmarks/${benchmark}/phases/${encodeURIComponent(phase.id)}/leaderboard`;
  const responses = await Promise.all(
    phase.splits.map((split) => apiFetch(`${url}?${new URLSearchParams({ split, limit: "100" })}`)),
  );
  if (responses.some((r) => r.status === 403)) {
    const text = `hidden until its end, ${phase.ends_at}: only the benchmark's owners see it before then`;
    return { state: "hidden", text, boards: [] };
  }
  const failed = responses.find((r) => !r.ok);
  if (failed) return { state: "error", text: (await problemOf(failed)).text, boards: [] };
  const boards = await Promise.all(responses.map((r) => r.json()));
  const frozen = boards[0].frozen_at;
  if (frozen) {
    const text = `frozen at ${frozen} (answer key v${boards[0].answer_key_version}): the board as it was at the ` +
      `end, ${phase.ends_at}`;
    return { state: "frozen", text, boards };
  }
  const hidden = phase.leaderboard_visibility === "hidden_until_end";
  const until = hidden ? "; hidden from all but the owners until then" : "";
  return { state: "live", text: `live: ranked on each read until the end, ${phase.ends_at}${until}`, boards };
}

// One split of a phase's board: the benchmark board's columns, or a line when it has no rows.
function phaseSplit(board) {
  const wrap = el("div", undefined, { class: "phase-split", "data-split": board.split });
  wrap.append(el("h4", `${board.split} split`));
  if (!board.items.length) {
    wrap.append(el("p", "no submissions on this split", { class: "meta" }));
    return wrap;
  }
  const table = el("table");
  const head = el("tr");
  for (const name of ["Rank", "Model", board.metric, "95% interval", "n", "Key", "Submitted", "Participant"]) {
    head.append(el("th", name));
  }
  table.append(el("thead"), el("tbody"));
  table.tHead.append(head);
  for (const r of board.items) table.tBodies[0].append(boardRow(r, board.metric));
  wrap.append(table);
  if (board.next_cursor) wrap.append(el("p", `the first ${board.items.length} rows`, { class: "meta" }));
  return wrap;
}

function phaseSection(phase, found) {
  const section = el("section", undefined, { class: "phase-board", "data-phase": phase.id, "data-state": found.state });
  const late = phase.late_submissions === "accept"
    ? "late submissions: accepted after its end until the next phase, stored as late and never ranked"
    : "late submissions: refused after its end";
  section.append(
    el("h3", `${phase.name}: board`),
    el("p", found.text, { class: "meta phase-board-state" }),
    el("p", late, { class: "meta phase-late" }),
    ...found.boards.map(phaseSplit),
  );
  return section;
}

let refreshPhases = async () => {};

// The phases table (counting down each second) and each phase's board; read again when a phase starts or ends in
// this browser's clock, when the key changes and after a submission from this page.
function setupPhases(box) {
  const benchmark = encodeURIComponent(box.dataset.benchmark);
  let cells = [];
  let loads = 0;
  let retry = null;
  const load = async () => {
    const mine = ++loads;
    const response = await fetch(`/v1/benchmarks/${benchmark}/phases`);
    if (!response.ok || mine !== loads) return;
    const phases = (await response.json()).items;
    const found = await Promise.all(phases.map((phase) => phaseBoards(benchmark, phase)));
    if (mine !== loads) return;
    box.hidden = phases.length === 0;
    cells = phases.map((phase) => {
      const tr = el("tr", undefined, { "data-phase": phase.id });
      const status = el("td", undefined, { class: "phase-status" });
      const board = phase.leaderboard_visibility === "public" ? "public" : "hidden until the end";
      const late = phase.late_submissions === "accept" ? "accepted (unranked)" : "refused";
      tr.append(el("td", phase.name), el("td", phase.starts_at), el("td", phase.ends_at), status);
      tr.append(el("td", board), el("td", late));
      return { phase, tr, status, shown: null };
    });
    document.querySelector("#phases tbody").replaceChildren(...cells.map((c) => c.tr));
    document.getElementById("phase-boards").replaceChildren(...phases.map((p, i) => phaseSection(p, found[i])));
    tick();
    // this browser's clock ahead of the server's: read again until the server agrees
    clearTimeout(retry);
    if (cells.some((c) => PHASE_ORDER[c.shown] > PHASE_ORDER[c.phase.status])) retry = setTimeout(load, 5000);
  };
  const tick = () => {
    const now = Date.now();
    let moved = false;
    for (const cell of cells) {
      const found = phaseStatus(cell.phase, now);
      moved = moved || (cell.shown !== null && cell.shown !== found.status);
      cell.shown = found.status;
      cell.status.textContent = found.text;
      cell.tr.dataset.status = found.status;
      cell.tr.classList.toggle("open", found.status === "open");
    }
    if (moved) load();
  };
  refreshPhases = load;
  onKeyChange(load);
  setInterval(tick, 1000);
  return load();
}

const phasesBox = document.getElementById("phases-box");
if (phasesBox) setupPhases(phasesBox);
const challenge = document.getElementById("challenge");
if (challenge) setupChallenge(challenge);
