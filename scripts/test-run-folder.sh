#!/usr/bin/env bash
# Checks make e2e's run-folder logic without running the suite (no Docker):
# ginkgo is replaced by a fake that records its arguments, and ROOT points at
# a scratch folder with no artifacts/ in it (as on a fresh clone).
#
#   - ARTIFACTS absolute and outside the repo, relative, and unset (a new unique
#     artifacts/<run-id>); artifacts/latest points at the run
#   - a run folder whose state lists live resources is refused, naming them
#   - a run folder another process holds is refused ("in use by pid")
#   - RESUME=1 names the run; a run of another OS user is refused unless RESUME_FOREIGN=1
#   - DRY_RUN=1 with a broken config exits non-zero naming the problem, and runs nothing
#
# Usage: scripts/test-run-folder.sh   (exit 0: all passed)
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'kill "${holder:-}" 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

root=$tmp/clone # stands for a fresh clone: no artifacts/, no bin/
mkdir -p "$root"
fake=$tmp/fake-ginkgo
cat >"$fake" <<'EOF'
#!/usr/bin/env bash
echo "$*" >>"$FAKE_GINKGO_LOG"
echo "fake ginkgo ran"
EOF
chmod +x "$fake"
export FAKE_GINKGO_LOG=$tmp/ginkgo.log
: >"$FAKE_GINKGO_LOG"

e2e() { make -s -C "$repo" e2e ROOT="$root" GINKGO="$fake" "$@"; }

# 1. absolute ARTIFACTS outside the repo, on a fresh clone
out=$(e2e ARTIFACTS="$tmp/outside/run-abs" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$(readlink "$root/artifacts/latest")" = "$tmp/outside/run-abs" ] &&
  [ -s "$tmp/outside/run-abs/console.log" ] && grep -qE -- "-e2e.artifacts-folder=$tmp/outside/run-abs( |$)" "$FAKE_GINKGO_LOG"; then
  pass "absolute ARTIFACTS outside the repo"
else
  fail "absolute ARTIFACTS outside the repo (rc $rc):"; echo "$out"
fi

# 2. relative ARTIFACTS (relative to the repo, where make runs)
rel=$(realpath --relative-to="$repo" "$tmp/outside/run-rel")
out=$(e2e ARTIFACTS="$rel" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$(readlink "$root/artifacts/latest")" = "$tmp/outside/run-rel" ] && [ -s "$tmp/outside/run-rel/console.log" ]; then
  pass "relative ARTIFACTS ($rel)"
else
  fail "relative ARTIFACTS (rc $rc):"; echo "$out"
fi

# 3. no ARTIFACTS: a new artifacts/<YYYYmmdd-HHMMSS-short> each time
e2e >/dev/null 2>&1 && a=$(readlink "$root/artifacts/latest")
e2e >/dev/null 2>&1 && b=$(readlink "$root/artifacts/latest")
if [[ ${a:-} =~ /artifacts/[0-9]{8}-[0-9]{6}-[a-z][a-z0-9]{4}$ ]] && [[ ${b:-} =~ /artifacts/[0-9]{8}-[0-9]{6}-[a-z][a-z0-9]{4}$ ]] && [ "$a" != "$b" ]; then
  pass "default run folders are unique ($(basename "$a"), $(basename "$b"))"
else
  fail "default run folders: '${a:-}' '${b:-}'"
fi

# 4. a folder whose state lists live resources
live=$tmp/outside/run-live
mkdir -p "$live"
cat >"$live/state.json" <<EOF
{"runID": "run-live", "owner": {"user": "$(id -un)", "uid": "$(id -u)", "host": "$(hostname)"}, "stages": {},
 "resources": [{"kind": "kind-cluster", "name": "tkg-e2e-kind", "state": "ready"}]}
EOF
: >"$FAKE_GINKGO_LOG"
out=$(e2e ARTIFACTS="$live" 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q "kind-cluster tkg-e2e-kind (ready)" <<<"$out" && grep -q "make clean-run ARTIFACTS=$live" <<<"$out" &&
  [ ! -s "$FAKE_GINKGO_LOG" ] && [ ! -e "$live/console.log" ]; then
  pass "a folder with live resources is refused"
else
  fail "a folder with live resources (rc $rc):"; echo "$out"
fi

# 5. RESUME=1 (through artifacts/latest) names the run; another user's run is refused
ln -sfn "$live" "$root/artifacts/latest"
out=$(e2e RESUME=1 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "resuming run run-live ($live), created by $(id -un)@$(hostname) at " <<<"$out" &&
  grep -q -- "-e2e.resume" "$FAKE_GINKGO_LOG"; then
  pass "RESUME=1 names the run it attaches to"
else
  fail "RESUME=1 of one's own run (rc $rc):"; echo "$out"
fi
sed -i 's/"user": "[^"]*", "uid": "[^"]*", "host": "[^"]*"/"user": "alice", "uid": "424242", "host": "testbed-7"/' "$live/state.json"
: >"$FAKE_GINKGO_LOG"
out=$(e2e RESUME=1 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q "belongs to alice@testbed-7" <<<"$out" && grep -q "RESUME_FOREIGN=1" <<<"$out" && [ ! -s "$FAKE_GINKGO_LOG" ]; then
  pass "RESUME=1 refuses another user's run"
else
  fail "RESUME=1 of another user's run (rc $rc):"; echo "$out"
fi
out=$(e2e RESUME=1 RESUME_FOREIGN=1 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "created by alice@testbed-7" <<<"$out" && grep -q -- "-e2e.resume-foreign" "$FAKE_GINKGO_LOG"; then
  pass "RESUME_FOREIGN=1 attaches to it"
else
  fail "RESUME_FOREIGN=1 (rc $rc):"; echo "$out"
fi

# 6. a run folder another process holds
busy=$tmp/outside/run-busy
mkdir -p "$busy"
python3 - "$busy/run.lock" <<'EOF' &
import fcntl, json, os, socket, sys, time
f = open(sys.argv[1], "w")
fcntl.flock(f, fcntl.LOCK_EX)
json.dump({"runID": "run-busy", "pid": os.getpid(), "host": socket.gethostname(), "user": "bob", "since": "2026-11-22T14:15:01Z"}, f)
f.flush()
time.sleep(300)
EOF
holder=$!
sleep 1
out=$(e2e ARTIFACTS="$busy" 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q "run run-busy is in use by pid $holder on host $(hostname) (user bob, since 2026-11-22T14:15:01Z); wait for it or pick another ARTIFACTS folder" <<<"$out"; then
  pass "a run folder in use is refused"
else
  fail "a run folder in use (rc $rc):"; echo "$out"
fi
kill "$holder"; wait "$holder" 2>/dev/null

# 7. DRY_RUN=1 validates the config first
cp -r "$repo/config" "$tmp/config"
sed -i 's/^    workerMachineCount: 1$/    workers: 1/' "$tmp/config/local.yaml"
: >"$FAKE_GINKGO_LOG"
out=$(e2e DRY_RUN=1 CONFIG="$tmp/config/local.yaml" 2>&1); rc=$?
if [ $rc -ne 0 ] && grep -q "workers" <<<"$out" && grep -q "local.yaml:" <<<"$out" && [ ! -s "$FAKE_GINKGO_LOG" ] && ! grep -q "^stages:" <<<"$out"; then
  pass "DRY_RUN=1 with a broken config exits $rc naming the problem"
else
  fail "DRY_RUN=1 with a broken config (rc $rc):"; echo "$out"
fi
out=$(e2e DRY_RUN=1 FOCUS=move 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "^stages: bootstrap -> management -> move" <<<"$out"; then
  pass "DRY_RUN=1 with a valid config prints the plan"
else
  fail "DRY_RUN=1 with a valid config (rc $rc):"; echo "$out"
fi

[ $fails -eq 0 ] && echo "all passed" || echo "$fails failed"
exit $((fails > 0))
