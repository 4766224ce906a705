#!/usr/bin/env bash
# Load test of the SDK hot path against a bare net/http server.
#
# `make load` builds bin/service and runs this. It needs wrk, curl and Go
# (to build the bare server); it installs nothing. Everything runs on
# loopback in a temporary directory that is removed at the end.
#
# Scenarios (one function each; add one to SCENARIOS to extend):
#   bare               scripts/bare: decode the request, write a fixed answer
#   variant_returning  users already assigned: answered from memory
#   variant_new        a new userId per request: assignment + impression
#                      committed (group commit) before the answer
#   events             POST /apps/{id}/events: the campaign's goal event from
#                      pre-assigned users (event + conversion check), committed
#                      (group commit) before the answer
#
# Environment: DURATION (10s), THREADS (2), CONNS (64), LOG_LEVEL (info, as
# in production: one log line per request), USERS (2000,
# pre-assigned users of variant_returning), BIN (bin/service).
set -euo pipefail

cd "$(dirname "$0")/.."

BIN=${BIN:-bin/service}
DURATION=${DURATION:-10s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
USERS=${USERS:-2000}
ADDR=127.0.0.1:18181
BARE_ADDR=127.0.0.1:18182
SCENARIOS=(bare variant_returning variant_new events)

if ! command -v wrk >/dev/null; then
	echo "load.sh: wrk is not installed; install it with: apt-get install -y wrk" >&2
	exit 1
fi
for tool in curl go; do
	if ! command -v "$tool" >/dev/null; then
		echo "load.sh: $tool is required" >&2
		exit 1
	fi
done
if [ ! -x "$BIN" ]; then
	echo "load.sh: $BIN not found; run make build first (make load does)" >&2
	exit 1
fi

TMP=$(mktemp -d)
PIDS=()
cleanup() {
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# field NAME JSON: the first string or number value of NAME in JSON.
field() {
	printf '%s' "$2" | grep -o "\"$1\":\"\?[^\",}]*" | head -1 | sed -E "s/^\"$1\":\"?//"
}

# wait_http URL: poll until URL answers anything over HTTP, for at most 10
# seconds.
wait_http() {
	for _ in $(seq 100); do
		if curl -sS -o /dev/null "$1" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	echo "load.sh: $1 did not come up" >&2
	exit 1
}

# api METHOD PATH BODY: a management call with the admin key.
api() {
	curl -fsS -X "$1" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
		--data "$3" "http://$ADDR/v1$2"
}

setup() {
	local db=$TMP/load.db app cv1 cv2 campaign
	app=$("$BIN" apps create --db "$db" --name load --plan enterprise --rate-limit 100000000)
	APP_ID=$(field id "$app")
	ADMIN=$(field key "$("$BIN" keys create --db "$db" --app "$APP_ID" --role admin)")
	CLIENT=$(field key "$("$BIN" keys create --db "$db" --app "$APP_ID" --role client)")

	"$BIN" serve --db "$db" --addr "$ADDR" --log-level "${LOG_LEVEL:-info}" 2>"$TMP/service.log" &
	PIDS+=($!)
	go build -o "$TMP/bare" ./scripts/bare
	"$TMP/bare" --addr "$BARE_ADDR" 2>"$TMP/bare.log" &
	PIDS+=($!)
	wait_http "http://$ADDR/healthz"
	wait_http "http://$BARE_ADDR/"

	cv1=$(field id "$(api POST "/apps/$APP_ID/content" '{"name":"Control","status":"published","items":[{"type":"text","content":"Hello","styles":{}}]}')")
	cv2=$(field id "$(api POST "/apps/$APP_ID/content" '{"name":"Treatment","status":"published","items":[{"type":"text","content":"Hi there","styles":{"fontSize":18}}]}')")
	campaign=$(api POST "/apps/$APP_ID/campaigns" "{\"name\":\"Load\",\"status\":\"active\",\"goalEventId\":\"purchase\",\"endDate\":\"2099-01-01T00:00:00Z\",\"variants\":[{\"contentViewId\":$cv1},{\"contentViewId\":$cv2}]}")
	CAMPAIGN_ID=$(field id "$campaign")
	VARIANT_URL="http://$ADDR/v1/apps-external/$APP_ID/campaigns/$CAMPAIGN_ID/variant"
	EVENTS_URL="http://$ADDR/v1/apps/$APP_ID/events"

	# Pre-assign the returning users: one curl process, many requests.
	local cfg=$TMP/preassign.curl
	: >"$cfg"
	for i in $(seq 0 $((USERS - 1))); do
		# "next" separates transfers; options after it apply to the next one.
		[ "$i" -gt 0 ] && echo next >>"$cfg"
		printf 'url = "%s"\nrequest = "POST"\nheader = "Authorization: Bearer %s"\nheader = "Content-Type: application/json"\ndata = "{\\"userId\\":\\"u-%d\\"}"\noutput = "/dev/null"\nfail\nsilent\nshow-error\n' \
			"$VARIANT_URL" "$CLIENT" "$i" >>"$cfg"
	done
	curl --no-progress-meter --parallel --parallel-max 16 -K "$cfg"
	local n
	n=$(field totalImpressions "$(curl -fsS -H "Authorization: Bearer $ADMIN" "http://$ADDR/v1/campaigns/$CAMPAIGN_ID/analytics")")
	if [ "$n" != "$USERS" ]; then
		echo "load.sh: pre-assigned $n users, want $USERS" >&2
		exit 1
	fi
}

# lua NAME BODY_EXPR: writes a wrk script whose request body is the Lua
# expression BODY_EXPR (with `n`, a per-thread counter, and `tid`, the
# thread number, in scope) and whose done() prints one RESULT line.
lua() {
	local f=$TMP/$1.lua
	cat >"$f" <<EOF
local threads, counter = {}, 0
function setup(thread)
	thread:set("tid", #threads + 1)
	table.insert(threads, thread)
end
function init(args)
	wrk.method = "POST"
	wrk.headers["Content-Type"] = "application/json"
	wrk.headers["Authorization"] = "Bearer $CLIENT"
end
function request()
	counter = counter + 1
	local n = counter
	return wrk.format(nil, nil, nil, $2)
end
function done(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("RESULT %.0f %.2f %d\n",
		summary.requests / (summary.duration / 1e6), latency:percentile(99) / 1000,
		e.connect + e.read + e.write + e.status + e.timeout))
end
EOF
	echo "$f"
}

# run NAME URL SCRIPT: one wrk run; records requests/s and p99 (ms).
declare -A RPS P99 ERRS
run() {
	local out
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -s "$3" "$2")
	echo "$out" >"$TMP/$1.out"
	read -r _ RPS[$1] P99[$1] ERRS[$1] < <(grep '^RESULT' <<<"$out")
	printf '%-18s %10s req/s   p99 %8s ms   errors %s\n' "$1" "${RPS[$1]}" "${P99[$1]}" "${ERRS[$1]}"
}

scenario_bare() {
	run bare "http://$BARE_ADDR/" "$(lua bare "string.format('{\"userId\":\"u-%d\"}', n % $USERS)")"
}

scenario_variant_returning() {
	run variant_returning "$VARIANT_URL" \
		"$(lua returning "string.format('{\"userId\":\"u-%d\"}', (n * $THREADS + tid) % $USERS)")"
}

scenario_variant_new() {
	run variant_new "$VARIANT_URL" "$(lua new "string.format('{\"userId\":\"new-%d-%d\"}', tid, n)")"
}

scenario_events() {
	run events "$EVENTS_URL" \
		"$(lua events "string.format('{\"eventId\":\"purchase\",\"userId\":\"u-%d\",\"metadata\":{\"amount\":%d}}', (n * $THREADS + tid) % $USERS, n % 100)")"
}

setup
echo "wrk -t$THREADS -c$CONNS -d$DURATION on $(nproc) CPUs; $USERS pre-assigned users"
for s in "${SCENARIOS[@]}"; do
	"scenario_$s"
done

echo
echo "ratio to bare (throughput, p99 latency):"
for s in "${SCENARIOS[@]}"; do
	[ "$s" = bare ] && continue
	awk -v n="$s" -v r="${RPS[$s]}" -v br="${RPS[bare]}" -v p="${P99[$s]}" -v bp="${P99[bare]}" \
		'BEGIN { printf "%-18s %5.2fx req/s   %5.2fx p99\n", n, r / br, p / bp }'
done
if grep -q . "$TMP/service.log"; then
	echo
	echo "service log (warnings and errors):"
	tail -20 "$TMP/service.log"
fi
