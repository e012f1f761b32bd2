#!/usr/bin/env bash
# ceo-loop-stop.sh — the CEO-LOOP (ORBIT) Stop hook of NXTG-Forge, reproduced
# from seed 000's description (skills/ceo-loop/SKILL.md, "Gotchas" 1-7) as the
# baseline `orbit hook stop` is benchmarked against (bench suite hookstop).
# The original script is not public; what it does is:
#
#   PROJECT_ROOT=$(pwd); the state file under it (gotcha 1)
#   guard 1: no state file     -> exit 0 (silently)
#   guard 2: no jq on PATH     -> exit 0 (silently, gotcha 2)
#   guard 3: active is false   -> exit 0
#   iteration >= max_iterations           -> active false, exit 0
#   minutes since started_at (python3; 0 without it, gotcha 2)
#     >= time_limit_minutes               -> active false, exit 0
#   else: iteration + 1 with jq (tmp + mv), and re-feed `head -30` of the
#   progress file, `tail -1` of the journal, the accuracy from the state's
#   counters (blank when they are 0, gotcha 7) and the invented
#   "budget remaining ~(100 - iteration x 4)%" (gotcha 6), printed as
#   {"decision":"block","reason":...} with jq -n.
#
# Claude Code's stdin is not read: the original keys everything to the
# working directory.

PROJECT_ROOT="$(pwd)"
STATE_FILE="$PROJECT_ROOT/.claude/ceo-loop-state.json"
PROGRESS_FILE="$PROJECT_ROOT/.claude/ceo-loop-progress.md"
JOURNAL_FILE="$PROJECT_ROOT/.claude/ceo-loop-decisions.jsonl"

# Guard 1: no loop here.
if [ ! -f "$STATE_FILE" ]; then
  exit 0
fi

# Guard 2: no jq, no loop.
if ! command -v jq >/dev/null 2>&1; then
  exit 0
fi

# Guard 3: the loop was stopped. One jq call reads every field the hook
# needs (a leaner baseline than one jq per field).
IFS=$'\t' read -r ACTIVE ITERATION MAX_ITERATIONS TIME_LIMIT STARTED_AT CORRECT INCORRECT TRUST_LEVEL < <(
  jq -r '[(.active // false), (.iteration // 0), (.max_iterations // 20), (.time_limit_minutes // 30),
          (.started_at // "-"), (.correct_decisions // 0), (.incorrect_decisions // 0), (.trust_level // "standard")] | @tsv' "$STATE_FILE"
)
if [ "$ACTIVE" != "true" ]; then
  exit 0
fi

stop_loop() {
  jq '.active = false' "$STATE_FILE" > "$STATE_FILE.tmp" && mv "$STATE_FILE.tmp" "$STATE_FILE"
  exit 0
}

# Iteration cap.
if [ "$ITERATION" -ge "$MAX_ITERATIONS" ]; then
  stop_loop
fi

# Time limit: minutes since started_at, 0 when python3 is missing.
ELAPSED=0
if command -v python3 >/dev/null 2>&1; then
  ELAPSED=$(python3 -c '
import sys
from datetime import datetime, timezone
try:
    s = datetime.fromisoformat(sys.argv[1].replace("Z", "+00:00"))
    print(int((datetime.now(timezone.utc) - s).total_seconds() // 60))
except Exception:
    print(0)
' "$STARTED_AT" 2>/dev/null || echo 0)
fi
if [ "$ELAPSED" -ge "$TIME_LIMIT" ]; then
  stop_loop
fi

# Next iteration.
NEXT=$((ITERATION + 1))
jq --argjson next "$NEXT" '.iteration = $next' "$STATE_FILE" > "$STATE_FILE.tmp" && mv "$STATE_FILE.tmp" "$STATE_FILE"

PROGRESS=""
if [ -f "$PROGRESS_FILE" ]; then
  PROGRESS=$(head -30 "$PROGRESS_FILE")
fi
LAST_DECISION=""
if [ -f "$JOURNAL_FILE" ]; then
  LAST_DECISION=$(tail -1 "$JOURNAL_FILE")
fi

ACCURACY_LINE=""
TOTAL=$((CORRECT + INCORRECT))
if [ "$TOTAL" -gt 0 ]; then
  ACCURACY_LINE="Accuracy: $CORRECT/$TOTAL = $((CORRECT * 100 / TOTAL))% | Trust level: $TRUST_LEVEL"
fi

BUDGET=$((100 - NEXT * 4))

REASON="CEO-LOOP iteration $NEXT of $MAX_ITERATIONS. Run the next ORBIT iteration: OBSERVE → REASON → BUILD → INSPECT → TURN.
Budget remaining: ~${BUDGET}%
$ACCURACY_LINE

Last decision (for retrograde):
$LAST_DECISION

Progress (top of .claude/ceo-loop-progress.md):
$PROGRESS"

jq -n --arg reason "$REASON" '{"decision": "block", "reason": $reason}'
