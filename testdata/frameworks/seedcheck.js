// seedcheck.js reads a project's loop files the way each framework's own
// code does, written from the seed documents (../shared/seeds/001-004), not
// from orbit's code, and says what the framework would do with them.
//
//   node seedcheck.js FRAMEWORK ROOT [ID] [NOW]
//
// prints one JSON object: {"errors": [...], "facts": {...}}. errors are the
// seed's rules a file breaks; facts are what the framework reads and would
// do next. The round-trip test (frameworks/roundtrip_test.go) asserts both
// after orbit stops, pauses and resumes a copy of every example file.
"use strict";

const fs = require("fs");
const path = require("path");

const [framework, root, id, nowArg] = process.argv.slice(2);
const now = nowArg ? Date.parse(nowArg) : Date.now();
const errors = [];
const facts = {};
const err = (msg) => errors.push(msg);

function readJSON(rel) {
  // Every framework reads its state with JSON.parse of the whole file.
  const text = fs.readFileSync(path.join(root, rel), "utf8");
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (e) {
    err(`${rel}: JSON.parse fails: ${e.message}`);
    return null;
  }
}

const exists = (rel) => fs.existsSync(path.join(root, rel));
const isTime = (s) => typeof s === "string" && !Number.isNaN(Date.parse(s));

// ---------------------------------------------------------------- seed 001
// Citadel loop contract: the fields every record declares, the shared stop
// states, the registry under .planning/loops/.
const citadelFields = ["id", "type", "trigger", "input", "scope", "permissions", "budget", "verifier", "retry",
  "stopConditions", "statePath", "reviewArtifact", "recovery"];
const stopStates = ["done", "verifier-passed", "verifier-failed", "blocked", "budget-exhausted", "attempt-limit",
  "needs-human-review", "unsafe-to-continue", "no-active-work", "stopped"];
// The words a record holds before it stops, as Citadel's own scripts
// write them (the examples: "planned"; the runner: "running").
const activeStates = ["planned", "running", "waiting", "paused"];
// docs/DAEMON.md: the daemon runs ("running"); a tick completes
// ("completed"); an operator stops it ("stopped", seed 001's word).
const daemonStates = ["running", "stopped", "completed"];

function citadel() {
  if (id === "daemon") {
    const d = readJSON(".planning/daemon.json");
    if (!d) return;
    facts.status = d.status;
    facts.stopReason = d.stopReason;
    if (!daemonStates.includes(d.status)) err(`daemon.json status ${JSON.stringify(d.status)} is not a daemon state (${daemonStates})`);
    if (d.stopReason != null && !stopStates.includes(d.stopReason)) err(`daemon.json stopReason ${JSON.stringify(d.stopReason)} is not a shared stop state`);
    if (d.status === "running" && d.stoppedAt != null) err("daemon.json is running with stoppedAt set");
    if (d.status !== "running" && !isTime(d.stoppedAt)) err("a stopped daemon without stoppedAt");
    if (!Array.isArray(d.log)) err("daemon.json log is not an array");
    for (const e of d.log || []) {
      for (const k of ["session", "timestamp", "status", "phase", "summary", "estimatedCost"]) {
        if (!(k in e)) err(`daemon log entry without ${k}`);
      }
    }
    facts.log = (d.log || []).length;
    return;
  }
  const rel = `.planning/loops/${id}.json`;
  const r = readJSON(rel);
  if (!r) return;
  for (const f of citadelFields) if (!(f in r)) err(`${rel}: no ${f} (every loop record should declare it)`);
  if (r.id !== id) err(`${rel}: id ${r.id} is not the file's`);
  if (r.statePath !== rel) err(`${rel}: statePath ${r.statePath}`);
  const status = String(r.status || "planned").trim().toLowerCase();
  facts.status = status;
  facts.stopReason = r.stopReason;
  facts.stoppedAt = r.stoppedAt;
  facts.notes = (r.notes || []).map((n) => (typeof n === "string" ? n : n.text));
  if (!stopStates.includes(status) && !activeStates.includes(status)) err(`${rel}: status ${status} is in neither vocabulary`);
  if (r.stopReason != null && !stopStates.includes(r.stopReason)) err(`${rel}: stopReason ${JSON.stringify(r.stopReason)} is not a shared stop state`);
  for (const c of r.stopConditions || []) if (!stopStates.includes(c)) err(`${rel}: stop condition ${c} is not a shared stop state`);
  if (activeStates.includes(status) && (r.stoppedAt != null || r.stopReason != null)) err(`${rel}: ${status} with stoppedAt/stopReason set`);
  if (stopStates.includes(status) && status !== "needs-human-review" && !isTime(r.stoppedAt)) err(`${rel}: stopped (${status}) without stoppedAt`);
  if (r.stopReason != null && r.stopReason !== status) err(`${rel}: stopReason ${r.stopReason} is not the status ${status}`);
  for (const k of ["createdAt", "updatedAt"]) if (!isTime(r[k])) err(`${rel}: ${k} is not a time`);
  if (!Array.isArray(r.runs)) err(`${rel}: runs is not an array`);
}

// ---------------------------------------------------------------- seed 002
// CCW: the master state file, the control signal the skill checks before
// every action, and its auto mode's selectNextAction (verbatim).
const ccwStatuses = ["created", "running", "paused", "completed", "failed", "user_exit"];

// From seed 002, "Auto Mode Selection Logic", unchanged.
function selectNextAction(state) {
  const skillState = state.skill_state

  // 1. Terminal conditions
  if (state.status === 'completed') return null
  if (state.status === 'failed') return null
  if (state.current_iteration >= state.max_iterations) return 'COMPLETE'

  // 2. Initialization check
  if (!skillState) return 'INIT'

  // 3. Auto selection based on state
  const hasPendingDevelop = skillState.develop.tasks.some(t => t.status === 'pending')

  if (hasPendingDevelop) return 'DEVELOP'

  if (skillState.last_action === 'DEVELOP') {
    if (skillState.develop.completed < skillState.develop.total) return 'DEBUG'
  }

  if (skillState.last_action === 'DEBUG' || skillState.debug.confirmed_hypothesis) {
    return 'VALIDATE'
  }

  if (skillState.last_action === 'VALIDATE') {
    if (!skillState.validate.passed) return 'DEVELOP'
  }

  if (skillState.validate.passed && !hasPendingDevelop) return 'COMPLETE'

  return 'DEVELOP'
}

// "Control Signal Checking: Agent checks state.status before every action".
function controlSignal(status) {
  if (status === "running") return "continue";
  if (status === "paused") return "exit gracefully, wait for resume";
  if (status === "failed") return "terminate";
  return "stop";
}

function ccw() {
  const rel = `.workflow/.loop/${id}.json`;
  const s = readJSON(rel);
  if (!s) return;
  facts.status = s.status;
  facts.failure_reason = s.failure_reason;
  if (!ccwStatuses.includes(s.status)) err(`${rel}: status ${s.status} is not one of ${ccwStatuses}`);
  if (s.loop_id !== id) err(`${rel}: loop_id ${s.loop_id}`);
  for (const k of ["created_at", "updated_at", "completed_at"]) if (k in s && !isTime(s[k])) err(`${rel}: ${k} is not ISO8601`);
  if ("failure_reason" in s && typeof s.failure_reason !== "string") err(`${rel}: failure_reason is not a string`);
  if ((s.status === "completed" || s.status === "failed") && !isTime(s.completed_at)) err(`${rel}: ${s.status} without completed_at`);
  facts.signal = controlSignal(s.status);
  if (s.task_id === undefined) facts.next = selectNextAction(s);
  if (s.task_id !== undefined) {
    // A v1 loop: its task, with loop_control, is read and never written.
    const t = readJSON(`.task/${s.task_id}.json`);
    if (t && (!t.loop_control || typeof t.loop_control.max_iterations !== "number")) err("the v1 task has no loop_control.max_iterations");
  }
}

// ---------------------------------------------------------------- seed 003
// Cavekit: the Stop hook no-ops without .loop.json; the lock is
// {owner, pid, host, heartbeat_at}, stale after 5 minutes; state.md holds
// phase, current_task, iteration as front matter.
function frontMatter(text) {
  const lines = text.split("\n");
  if (lines[0].trim() !== "---") return null;
  const meta = {};
  for (let i = 1; i < lines.length; i++) {
    if (lines[i].trim() === "---") return meta;
    const m = /^([A-Za-z0-9_\-]+)\s*:\s*(.*)$/.exec(lines[i]);
    if (m) meta[m[1]] = m[2].trim().replace(/^"(.*)"$/, "$1");
  }
  return null;
}

function cavekit() {
  facts.stopHookActive = exists(".cavekit/.loop.json");
  if (facts.stopHookActive) {
    const l = readJSON(".cavekit/.loop.json");
    if (l && (typeof l.iteration !== "number" || typeof l.max_iterations !== "number")) err(".loop.json without iteration and max_iterations");
  }
  facts.lock = null;
  if (exists(".cavekit/.loop.lock")) {
    const lk = readJSON(".cavekit/.loop.lock");
    if (lk) {
      for (const k of ["owner", "pid", "host", "heartbeat_at"]) if (!(k in lk)) err(`.loop.lock without ${k}`);
      const hb = typeof lk.heartbeat_at === "number" ? lk.heartbeat_at : Date.parse(lk.heartbeat_at);
      facts.lock = { owner: lk.owner, stale: !(now - hb <= 5 * 60 * 1000) };
    }
  }
  if (exists(".cavekit/state.md")) {
    const meta = frontMatter(fs.readFileSync(path.join(root, ".cavekit/state.md"), "utf8"));
    if (!meta) err("state.md has no front matter");
    else {
      facts.phase = meta.phase;
      facts.state = meta;
      if (!("phase" in meta)) err("state.md front matter has no phase");
      if ("updated_at" in meta && !isTime(meta.updated_at)) err("state.md updated_at is not a time");
    }
  }
}

// ---------------------------------------------------------------- seed 004
// Conductor: metadata.json's loop_state, what resumeOrchestration does with
// it, completeWithWarnings' five steps, the Track Completion Protocol,
// logAutonomousDecision's record, and tracks.md.
const steps = ["PLAN", "EVALUATE_PLAN", "EXECUTE", "PARALLEL_EXECUTE", "EVALUATE_EXECUTION", "FIX", "BUSINESS_SYNC", "COMPLETE", "ESCALATE"];
const stepStatuses = ["NOT_STARTED", "IN_PROGRESS", "PASSED", "FAILED", "BLOCKED", "PASSED_WITH_WARNINGS"];
const decisionTypes = ["ambiguity_resolved", "blocker_skipped", "board_decided", "fix_limit_reached", "completed_with_warnings"];

// What resumeOrchestration would do on this state (its switch, with the
// reads each case makes).
function resumption(m) {
  const { current_step, step_status } = m.loop_state;
  switch (step_status) {
    case "NOT_STARTED": return `dispatch ${current_step}`;
    case "IN_PROGRESS": return `resume ${current_step}`;
    case "PASSED": return current_step === "COMPLETE" ? "complete" : `next step after ${current_step}`;
    case "FAILED": return `handle the failure of ${current_step}`;
    case "BLOCKED": {
      const activeBlockers = m.blockers.filter((b) => b.status === "ACTIVE"); // throws when blockers is not an array
      return activeBlockers.length > 0 ? `skip blocked tasks: ${activeBlockers[0].description}` : `dispatch ${current_step}`;
    }
    default: return current_step === "COMPLETE" ? "complete" : `no case for ${step_status}`;
  }
}

function tracksRow(trackId) {
  if (!exists("conductor/tracks.md")) return null;
  let section = "";
  for (const line of fs.readFileSync(path.join(root, "conductor/tracks.md"), "utf8").split("\n")) {
    if (line.startsWith("#")) section = line.replace(/^#+\s*/, "");
    const cells = line.split("|").map((c) => c.trim().replace(/^`|`$/g, ""));
    if (line.trim().startsWith("|") && cells[1] === trackId) return { section, cells: cells.slice(1, -1) };
  }
  return null;
}

function conductor() {
  const rel = `conductor/tracks/${id}/metadata.json`;
  const m = readJSON(rel);
  if (!m) return;
  if (!m.version || m.version < 2) facts.migrates = true; // detectCurrentStep migrates v1
  const ls = m.loop_state;
  facts.status = m.status;
  facts.completed_at = m.completed_at;
  if (ls) {
    facts.step = ls.current_step;
    facts.stepStatus = ls.step_status;
    if (!steps.includes(ls.current_step) && ls.current_step !== "NOT_STARTED") facts.unknownStep = ls.current_step;
    if (!stepStatuses.includes(ls.step_status)) facts.unknownStepStatus = ls.step_status;
    try {
      facts.resumption = resumption(m);
    } catch (e) {
      err(`${rel}: resumeOrchestration throws: ${e.message}`);
    }
  }
  const decisions = m.autonomous_decisions || [];
  if (!Array.isArray(decisions)) err(`${rel}: autonomous_decisions is not an array`);
  for (const d of decisions) {
    for (const k of ["timestamp", "type", "context", "decision", "reasoning"]) if (typeof d[k] !== "string") err(`${rel}: an autonomous decision without ${k}`);
    if (!decisionTypes.includes(d.type)) err(`${rel}: decision type ${d.type}`);
    if (!isTime(d.timestamp)) err(`${rel}: decision timestamp ${d.timestamp}`);
  }
  facts.decisions = decisions.map((d) => d.type);
  facts.warnings = m.warnings;
  if ("warnings" in m && !Array.isArray(m.warnings)) err(`${rel}: warnings is not an array`);
  if ("blockers" in m && !Array.isArray(m.blockers)) err(`${rel}: blockers is not an array`);
  facts.activeBlockers = (m.blockers || []).filter((b) => b.status === "ACTIVE").map((b) => b.description);
  // completeWithWarnings: its five steps left their marks.
  if (ls && ls.step_status === "PASSED_WITH_WARNINGS") {
    if (ls.current_step !== "COMPLETE") err(`${rel}: PASSED_WITH_WARNINGS at ${ls.current_step}, not COMPLETE`);
    if (!Array.isArray(m.warnings) || m.warnings.length === 0) err(`${rel}: completed with warnings, but no warnings`);
    if (!decisions.some((d) => d.type === "completed_with_warnings")) err(`${rel}: completed with warnings, but no completed_with_warnings decision`);
  }
  // The Track Completion Protocol: status complete and completed_at (real
  // tracks drift from it: a fact, not an error).
  if (ls && ls.current_step === "COMPLETE" && /^PASSED/.test(ls.step_status)) {
    facts.completionProtocol = m.status === "complete" && isTime(m.completed_at);
  }
  const row = tracksRow(m.track_id || id);
  facts.tracks = row && { section: row.section, cells: row.cells };
}

({ citadel, ccw, cavekit, conductor })[framework]();
process.stdout.write(JSON.stringify({ errors, facts }) + "\n");
