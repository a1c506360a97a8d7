package smoke

// serverScript writes the answer every request gets, then serves it. The
// answer names the pod and its node, so a client learns which node answered
// a request through the Service, not only that something did.
const serverScript = `printf 'pod=%s node=%s ip=%s\n' "$POD_NAME" "$NODE_NAME" "$POD_IP" > /www/index.html
exec httpd -f -p 8080 -h /www`

// clientScript is run by every client pod. Lines starting with "smoke " are
// the report that parseClientLog reads, one per check; everything else is
// for a person reading the log. The value of answer= and error= runs to the
// end of the line, the other key=value pairs hold no spaces.
//
// Each check is retried until it works or SMOKE_BUDGET_SECONDS have passed:
// a new Service's DNS record and kube-proxy rules reach the nodes a moment
// after its endpoints are Ready, and that delay is not a failure. The exit
// code is 1 when any check failed, so a script that dies half-way is not
// mistaken for a pass.
//
// An attempt is bounded with timeout, not wget -T: a busybox built without
// FEATURE_WGET_TIMEOUT (Debian's 1.35, for one) crashes on -T, and nslookup
// has no such option at all. resolve requires an address in the answer,
// not only a zero exit code: nslookup exits 0 for an answer without records.
//
// Environment: SMOKE_NODE (the client's node), SMOKE_SERVICE_HOST (the
// Service's FQDN), SMOKE_BACKENDS ("<pod>=<url> ..."), SMOKE_BUDGET_SECONDS,
// SMOKE_ATTEMPT_SECONDS (the bound of one attempt and the pause between
// attempts).
const clientScript = `set -u
end=$(( $(date +%s) + SMOKE_BUDGET_SECONDS ))
failed=0
out=""
addr=""
attempt() {
  while ! "$@"; do
    [ "$(date +%s)" -ge "$end" ] && return 1
    sleep "$SMOKE_ATTEMPT_SECONDS"
  done
}
oneline() { printf '%s' "$1" | tr '\n\t' '  '; }
bounded() {
  out=$(timeout "$SMOKE_ATTEMPT_SECONDS" "$@" 2>&1)
  rc=$?
  [ "$rc" -eq 0 ] && return 0
  [ -z "$out" ] && out="$1: no answer within $SMOKE_ATTEMPT_SECONDS s (exit code $rc)"
  return 1
}
resolve() {
  bounded nslookup "$SMOKE_SERVICE_HOST"
  addr=$(printf '%s\n' "$out" | awk '/^Name:/ { n = 1; next } n && /^Address/ { sub(/^Address( [0-9]+)?:[ \t]*/, ""); split($0, a, " "); print a[1]; exit }')
  [ -n "$addr" ]
}
fetch() {
  bounded wget -q -O - "$1"
}
echo "client on node $SMOKE_NODE: DNS, Service and pod IPs ($SMOKE_BACKENDS)"
if attempt resolve; then
  echo "smoke dns host=$SMOKE_SERVICE_HOST ok address=$addr"
else
  failed=1
  echo "smoke dns host=$SMOKE_SERVICE_HOST fail error=$(oneline "$out")"
fi
if attempt fetch "http://$SMOKE_SERVICE_HOST/"; then
  echo "smoke request via=service target=$SMOKE_SERVICE_HOST ok answer=$(oneline "$out")"
else
  failed=1
  echo "smoke request via=service target=$SMOKE_SERVICE_HOST fail error=$(oneline "$out")"
fi
for b in $SMOKE_BACKENDS; do
  pod=${b%%=*}
  url=${b#*=}
  if attempt fetch "$url"; then
    echo "smoke request via=pod-ip target=$pod url=$url ok answer=$(oneline "$out")"
  else
    failed=1
    echo "smoke request via=pod-ip target=$pod url=$url fail error=$(oneline "$out")"
  fi
done
echo "smoke done failed=$failed"
exit $failed
`
