// estibench web page: the sign-in every page shares, an estimator's params form (pre-filled from a run with
// ?from_run=<id>) and job progress. Signing in is typing an API key in the header's form: the key stays in this
// tab's sessionStorage and goes out only as the Authorization header of the page's own API calls (apiFetch), never
// in a URL or a cookie. Page scripts (runs.js, benchmark.js) follow sign-in and sign-out with onKeyChange. No
// external assets, no inline script (the Content-Security-Policy allows neither).
"use strict";

const KEY_ITEM = "estibench.apiKey";
const KEY_EVENT = "estibench:key";

function apiKey() {
  try {
    return sessionStorage.getItem(KEY_ITEM) || "";
  } catch {
    return "";
  }
}

// Sign in with ``key`` (an empty key signs out) and tell the page.
function setApiKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY_ITEM, key);
    else sessionStorage.removeItem(KEY_ITEM);
  } catch {
    // storage refused (e.g. disabled): the tab stays signed out
  }
  window.dispatchEvent(new Event(KEY_EVENT));
}

function onKeyChange(listener) {
  window.addEventListener(KEY_EVENT, listener);
}

// The page's own sentence about the key in use (e.g. that it may not see a split).
function keyState(text) {
  document.getElementById("key-state").textContent = text;
}

let signedIn = Promise.resolve(null);

// Who the tab's key is (GET /v1/api-keys/self), or null without a valid key.
function whoAmI() {
  return signedIn;
}

async function readSelf() {
  if (!apiKey()) return null;
  const response = await apiFetch("/v1/api-keys/self");
  return response.ok ? response.json() : { invalid: response.status };
}

function setupSignIn() {
  const form = document.getElementById("key-form");
  const input = document.getElementById("api-key");
  const who = document.getElementById("key-who");
  const out = document.getElementById("key-forget");
  const show = async () => {
    const reading = readSelf();
    signedIn = reading.then((self) => (self && !self.invalid ? self : null));
    const self = await reading;
    out.hidden = !apiKey();
    if (!self) who.textContent = "not signed in";
    else if (self.invalid) who.textContent = `this key is refused (${self.invalid}): invalid or revoked`;
    else {
      const bound = self.benchmark_id ? ", participant" : "";
      who.textContent = `signed in as ${self.name} (key ${self.prefix}; ${self.scopes.join(", ")}${bound})`;
    }
    document.body.dataset.signedIn = self && !self.invalid ? self.id : "";
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const key = input.value.trim();
    input.value = "";
    if (key) setApiKey(key);
  });
  out.addEventListener("click", () => setApiKey(""));
  onKeyChange(show);
  show();
}

function apiFetch(url, init = {}) {
  const headers = { ...(init.headers || {}) };
  const key = apiKey();
  if (key) headers.Authorization = `Bearer ${key}`;
  return fetch(url, { ...init, headers });
}

// An image of the API shown in ``img``: its URL without a key, a data: URL of the answer to a call with the key
// (an image request cannot carry it); false when there is none (e.g. no plot).
async function showImage(img, url) {
  const response = await apiFetch(url);
  if (!response.ok) return false;
  if (!apiKey()) {
    img.src = url;
    return true;
  }
  const blob = await response.blob();
  img.src = await new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(blob);
  });
  return true;
}

function fieldValue(el) {
  const kind = el.dataset.kind;
  if (kind === "boolean") return el.checked;
  const text = el.value.trim();
  if (text === "") return undefined;
  if (kind === "integer") return Number.parseInt(text, 10);
  if (kind === "number") return Number(text);
  if (kind === "json") return JSON.parse(text);
  return text;
}

function collectParams(form) {
  const params = {};
  for (const el of form.querySelectorAll("[data-kind]")) {
    if (el.dataset.kind === "boolean" && !el.checked && !el.defaultChecked) continue;
    const value = fieldValue(el);
    if (value !== undefined) params[el.name] = value;
  }
  return params;
}

async function followJob(jobId, onUpdate) {
  for (;;) {
    const job = await (await apiFetch(`/v1/jobs/${jobId}`)).json();
    onUpdate(job);
    if (!["queued", "running"].includes(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function showRun(runId) {
  const run = await (await apiFetch(`/v1/runs/${runId}`)).json();
  document.getElementById("result").textContent = JSON.stringify(run, null, 2);
  const plot = document.getElementById("plot");
  if (await showImage(plot, `/v1/runs/${runId}/plot`)) plot.hidden = false;
  const link = document.getElementById("run-link");
  if (link) {
    link.href = `/runs/${runId}`;
    link.hidden = false;
  }
}

// ?from_run=<id>: the form's fields set to that run's params (read with the tab's key).
async function prefill(form) {
  const runId = new URLSearchParams(window.location.search).get("from_run");
  if (!runId) return;
  const note = document.createElement("p");
  note.id = "prefill-note";
  note.className = "meta";
  form.before(note);
  const response = await apiFetch(`/v1/runs/${encodeURIComponent(runId)}`);
  if (!response.ok) {
    note.textContent = `run ${runId} could not be read (${response.status}): the form keeps its defaults`;
    return;
  }
  const run = await response.json();
  for (const el of form.querySelectorAll("[data-kind]")) {
    if (!Object.hasOwn(run.params, el.name)) continue;
    const value = run.params[el.name];
    if (el.dataset.kind === "boolean") el.checked = Boolean(value);
    else if (el.dataset.kind === "json") el.value = JSON.stringify(value);
    else el.value = value === null ? "" : String(value);
  }
  form.dataset.prefilled = runId;
  note.textContent = `params of run ${runId}`;
}

function setupForm(form) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const outcome = document.getElementById("outcome");
    const status = document.getElementById("status");
    const bar = document.getElementById("job-progress");
    outcome.hidden = false;
    document.getElementById("plot").hidden = true;
    document.getElementById("result").textContent = "";
    let params;
    try {
      params = collectParams(form);
    } catch (err) {
      status.textContent = `invalid JSON in a field: ${err.message}`;
      return;
    }
    status.textContent = "running…";
    const response = await apiFetch(form.dataset.endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(params),
    });
    const body = await response.json();
    if (response.status === 200) {
      status.textContent = `run ${body.id}${body.cached ? " (cached)" : ""} in ${body.duration_ms.toFixed(1)} ms`;
      await showRun(body.id);
    } else if (response.status === 202) {
      bar.hidden = false;
      const job = await followJob(body.id, (j) => {
        bar.value = j.progress ? j.progress.fraction : 0;
        status.textContent = `job ${j.id}: ${j.status} ${j.progress ? j.progress.message : ""}`;
      });
      if (job.run_id) await showRun(job.run_id);
      else document.getElementById("result").textContent = JSON.stringify(job.problem, null, 2);
    } else {
      status.textContent = `${response.status} ${body.title}: ${body.detail || ""}`;
      document.getElementById("result").textContent = JSON.stringify(body, null, 2);
    }
  });
}

function setupJob(box) {
  const jobId = box.dataset.job;
  followJob(jobId, (job) => {
    document.getElementById("job-status").textContent = job.status;
    const fraction = job.progress ? job.progress.fraction : 0;
    document.getElementById("job-bar").value = fraction;
    document.getElementById("job-fraction").textContent = `${Math.round(fraction * 100)}%`;
    document.getElementById("job-message").textContent = job.progress ? job.progress.message : "";
    if (job.run_id) {
      const link = document.getElementById("job-run-link");
      link.href = `/v1/runs/${job.run_id}`;
      link.textContent = job.run_id;
      document.getElementById("job-run").hidden = false;
    }
  });
}

setupSignIn();
const form = document.getElementById("params-form");
if (form) {
  setupForm(form);
  prefill(form);
}
const jobBox = document.getElementById("job");
if (jobBox) setupJob(jobBox);
