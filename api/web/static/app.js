// estibench web page: runs an estimator from its params form and follows jobs. No external assets.
"use strict";

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
    const job = await (await fetch(`/v1/jobs/${jobId}`)).json();
    onUpdate(job);
    if (!["queued", "running"].includes(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function showRun(runId) {
  const run = await (await fetch(`/v1/runs/${runId}`)).json();
  document.getElementById("result").textContent = JSON.stringify(run, null, 2);
  const plot = document.getElementById("plot");
  const probe = await fetch(`/v1/runs/${runId}/plot`, { method: "GET" });
  if (probe.ok) {
    plot.src = `/v1/runs/${runId}/plot`;
    plot.hidden = false;
  }
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
    const response = await fetch(form.dataset.endpoint, {
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

const form = document.getElementById("params-form");
if (form) setupForm(form);
const jobBox = document.getElementById("job");
if (jobBox) setupJob(jobBox);
