"use strict";
// The dashboard: everything comes from the JSON API; it refreshes when the
// server says the journal grew (server-sent events), and every 30 s anyway.
const $ = (id) => document.getElementById(id);
const pct = (x) => (100 * x).toFixed(1) + "%";
const ci = (c) => c ? "95% CI " + pct(c.low) + "–" + pct(c.high) : "";

// The bearer token comes with the URL orbit serve prints (#token=...); the
// fragment never reaches the server, and the token is kept in this tab's
// sessionStorage only, never in a cookie. Requests send it as a bearer
// header. Off loopback an EventSource or an <img> cannot send a header: the
// page trades the token, once, for a read session the server keeps in an
// HttpOnly cookie of its own (POST /api/v1/session; none on loopback).
const session = (async function () {
  const m = location.hash.match(/(?:^#|&)token=([^&]+)/);
  if (m) {
    sessionStorage.setItem("orbit-token", decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  const t = sessionStorage.getItem("orbit-token");
  if (!t) return;
  try {
    await fetch("/api/v1/session", { method: "POST", headers: { Authorization: "Bearer " + t } });
  } catch (e) { /* reads that need it will say so */ }
})();

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text == null ? "" : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function fill(tbody, rows, cols, empty) {
  tbody.replaceChildren();
  if (!rows.length) {
    const tr = document.createElement("tr");
    const td = cell(tr, empty, "empty");
    td.colSpan = cols;
    tbody.appendChild(tr);
    return;
  }
  for (const r of rows) tbody.appendChild(r);
}

async function fetchJSON(path) {
  const headers = { Accept: "application/json" };
  const t = sessionStorage.getItem("orbit-token");
  if (t) headers.Authorization = "Bearer " + t;
  const res = await fetch(path, { headers });
  if (!res.ok) throw new Error(path + ": " + res.status);
  return { body: await res.json(), headers: res.headers };
}

async function get(path) {
  return (await fetchJSON(path)).body;
}

async function loadTrust() {
  const t = await get("/api/v1/trust");
  $("level").textContent = t.level;
  $("level").className = "level " + t.level;
  $("accuracy").textContent = t.with_outcome ? pct(t.accuracy) : "n/a";
  $("accuracy-ci").textContent = t.with_outcome ? t.correct + "/" + t.with_outcome + " · " + ci(t.ci95) : "";
  $("last20").textContent = t.last20.n ? pct(t.last20.accuracy) : "n/a";
  $("last20-ci").textContent = t.last20.n ? t.last20.correct + "/" + t.last20.n + " · " + ci(t.last20.ci95) : "";
  $("last10").textContent = t.last10.n ? pct(t.last10.accuracy) : "n/a";
  $("last10-ci").textContent = t.last10.n ? t.last10.correct + "/" + t.last10.n + " · " + ci(t.last10.ci95) : "";
  $("decisions").textContent = t.decisions;
  $("scored").textContent = t.with_outcome + " with an outcome";
  const c = t.calibration;
  $("brier").textContent = c.n ? "Brier " + c.brier.toFixed(3) : "n/a";
  $("ece").textContent = c.n ? "ECE " + c.ece.toFixed(3) + " · n=" + c.n : "no stated confidence";
  $("alert").hidden = !t.alert;
  $("alert").textContent = t.alert ? t.alert_text : "";
  $("chart").src = "/api/v1/trust/chart.svg?g=" + Date.now();
}

async function loadQueue() {
  const q = await get("/api/v1/queue");
  $("queue-meta").textContent = q.pending.length ? q.pending.length + " pending · next depth " + q.next_depth : "";
  fill($("queue"), q.pending.map((r) => {
    const tr = document.createElement("tr");
    cell(tr, r.id); cell(tr, r.title, "input"); cell(tr, r.category); cell(tr, r.depth);
    return tr;
  }), 4, "the queue is empty");
}

async function loadStale() {
  const s = await fetchJSON("/api/v1/stale?limit=20");
  const total = s.headers.get("X-Total-Count");
  $("stale-meta").textContent = s.body.length ? total + " unverified · iteration " + s.headers.get("X-Current-Iteration") : "";
  fill($("stale"), s.body.map((d) => {
    const tr = document.createElement("tr");
    cell(tr, d.id); cell(tr, d.age_iterations + " iter"); cell(tr, d.category); cell(tr, d.input, "input");
    return tr;
  }), 4, "nothing stale");
}

function decisionRow(d, avoid) {
  const tr = document.createElement("tr");
  if (avoid) tr.className = "avoid";
  cell(tr, d.id); cell(tr, d.iteration); cell(tr, d.category); cell(tr, d.tier); cell(tr, d.decision);
  // A voided decision (recorded by mistake) says so, and why on hover.
  const outcome = d.voided ? "VOIDED" : d.outcome;
  const oc = cell(tr, outcome + (avoid ? " · AVOID" : ""), "outcome-" + outcome);
  if (d.voided) oc.title = "voided: " + d.void_reason;
  cell(tr, d.input, "input");
  return tr;
}

let searching = "";
async function loadDecisions() {
  if (searching) {
    const hits = await get("/api/v1/precedent?k=10&q=" + encodeURIComponent(searching));
    fill($("decisions-table"), hits.map((h) => decisionRow(h, h.avoid)), 7, "no similar past decision");
    return;
  }
  const latest = await get("/api/v1/decisions?limit=25");
  fill($("decisions-table"), latest.map((d) => decisionRow(d, false)), 7, "no decision yet");
}

async function loopAction(id, action) {
  if (!confirm(action[0].toUpperCase() + action.slice(1) + " loop " + id + "?")) return;
  let token = sessionStorage.getItem("orbit-token");
  if (!token) {
    token = prompt("Bearer token (printed by orbit serve):");
    if (!token) return;
    sessionStorage.setItem("orbit-token", token);
  }
  const res = await fetch("/api/v1/loops/" + encodeURIComponent(id) + "/" + action, {
    method: "POST", headers: { Authorization: "Bearer " + token, "Content-Type": "application/json" }, body: "{}",
  });
  if (!res.ok) {
    const p = await res.json().catch(() => ({ title: res.statusText }));
    alert(action + " failed: " + p.title + (p.detail ? " — " + p.detail : ""));
    if (res.status === 401) sessionStorage.removeItem("orbit-token");
  } else {
    // A resumed CCW loop does not continue by itself: say what does.
    const r = await res.json().catch(() => ({}));
    if (r.next) alert("Resumed. To continue: " + r.next);
  }
  refresh();
}

async function loadLoops() {
  let loops;
  try { loops = await get("/api/v1/loops"); } catch (e) { $("loops-card").hidden = true; return; }
  $("loops-card").hidden = false;
  fill($("loops"), loops.map((l) => {
    const tr = document.createElement("tr");
    cell(tr, l.framework); cell(tr, l.id); cell(tr, l.title, "input"); cell(tr, l.status);
    cell(tr, l.max_iterations ? l.iteration + "/" + l.max_iterations : (l.iteration ?? ""));
    cell(tr, l.updated_at || "");
    const td = cell(tr, "");
    for (const action of l.controls || []) {
      const b = document.createElement("button");
      b.textContent = action[0].toUpperCase() + action.slice(1);
      if (action === "stop") b.className = "danger";
      b.dataset.loop = l.id;
      b.addEventListener("click", () => loopAction(l.id, action));
      td.appendChild(b);
    }
    return tr;
  }), 7, "no loop in this project");
}

let refreshing = null;

// refresh reloads every panel; a refresh asked for while one runs waits
// for it and runs once more, so slow answers never pile up.
async function refresh() {
  if (refreshing) { refreshing.again = true; return; }
  refreshing = { again: false };
  try {
    await refreshOnce();
  } finally {
    const again = refreshing.again;
    refreshing = null;
    if (again) refresh();
  }
}

async function refreshOnce() {
  const results = await Promise.allSettled([loadTrust(), loadQueue(), loadStale(), loadDecisions(), loadLoops()]);
  const failed = results.filter((r) => r.status === "rejected");
  $("updated").textContent = (failed.length ? "some panels failed to load: " + failed[0].reason.message + " · " : "") +
    "updated " + new Date().toLocaleTimeString();
}

$("search").addEventListener("submit", (e) => { e.preventDefault(); searching = $("q").value.trim(); loadDecisions(); });
$("clear").addEventListener("click", () => { searching = ""; $("q").value = ""; loadDecisions(); });

function listen() {
  const es = new EventSource("/api/v1/events");
  es.addEventListener("hello", () => { $("live").textContent = "live"; $("live").className = "live on"; });
  es.addEventListener("sync", refresh);
  es.onerror = () => { $("live").textContent = "reconnecting…"; $("live").className = "live"; };
}

session.then(() => {
  refresh();
  listen();
  setInterval(refresh, 30000);
});
