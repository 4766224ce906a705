#!/usr/bin/env bash
# Load test of the SDK write paths against a bare net/http server.
#
#   scripts/load.sh        `make load`: three rounds of every workload
#   scripts/load.sh soak   `make soak`: 1M new users, then 1M events
#   scripts/load.sh scale  `make load-replicas` (PostgreSQL): each workload on
#                          one replica on one core, then on two replicas on
#                          two cores, and the scaling factor of each; with
#                          PROFILE=1, CPU profiles of the second replica
#   scripts/load.sh profile WORKLOAD
#                          a CPU profile of the service during one run of
#                          WORKLOAD, saved as WORKLOAD.pprof in OUT (the
#                          current directory unless set; go tool pprof -top
#                          ./service FILE);
#                          with TRACE=1, a 3 s execution trace WORKLOAD.trace
#
# It needs wrk, curl and Go (to build the bare server) and installs nothing.
# Everything runs on loopback in a temporary directory removed at the end.
#
# The configuration is fixed so that figures compare across runs and
# machines: with two CPUs or more, the service (and, in its turn, the bare
# server) runs on CPU 1 with one Go scheduler thread, and wrk on CPU 0:
#   taskset -c 1 env GOMAXPROCS=1 ./service serve ...
#   taskset -c 0 wrk -t1 -c64 -d10s      (after a 3 s warm-up, same requests)
# Each round runs the bare server, the workloads and the bare server
# again; the figure that counts is each workload's requests/s divided by
# bare's in the same round, bare's rate for a workload being drawn on a
# line from the round's first bare run to its last (a shared machine's
# speed drifts within a round, and bare's rate moves more than the
# service's).
# The report is the median over ROUNDS rounds, plus the service's peak RSS
# (VmHWM from /proc/<pid>/status) and its checkpointer child's.
#
# Workloads:
#   bare               scripts/bare: decode the request, write a fixed answer
#   variant_returning  users already assigned asking for their variant
#   ofrep              the same users evaluating the campaign as an
#                      OpenFeature flag (POST /ofrep/v1/evaluate/flags/load)
#   variant_new        a fresh userId per request on an active two-variant
#                      campaign: assignment + impression committed first
#   events             the campaign's goal event from assigned users: event
#                      (and conversion) committed before the answer
#   metrics            events from the users assigned in a second campaign
#                      that measures five metrics (three secondary, two
#                      guardrails: counts, a capped revenue sum, a windowed
#                      conversion, a sum to decrease); every event moves one
#                      or two of them, and an order also converts
#   identities         a variant request carrying both a userId and the
#                      sessionId linked to it, on a third campaign: nine in
#                      ten are pairs linked and assigned in setup (no write),
#                      one in ten a fresh pair (assignment, impression and
#                      link committed before the answer)
#   identities_events  that campaign's goal event sent by the session alone
#                      of a linked user: counted for the user it is linked to
#   exposures          POST /apps-external/{appId}/exposures, 50 fresh users
#                      a request on the first campaign, each with the variant
#                      the server gives it (the hash computed in Lua), so all
#                      are recorded; an exposure answered recorded:false counts
#                      as an error. Its req/s times 50 is printed beside
#                      variant_new's req/s: one item should cost less than
#                      one new user's variant request
#
# The campaigns and users of metrics, identities and exposures are made only
# when their workloads run, so that the others measure the same database as
# before they existed.
#
# STORE=postgres runs the same on PostgreSQL: a throwaway server from
# scripts/with-postgres.sh, durable (fsync and synchronous commit on, as in
# production), pinned to the service's CPU so that the whole backend gets
# one core, as SQLite's does (`make load-postgres`).
#
# Environment: STORE (sqlite or postgres), WORKLOADS (a subset, space separated), ROUNDS (3), DURATION (10s), WARMUP (3s), CONNS (64), USERS
# (2000 pre-assigned returning users, and as many metrics users and linked
# pairs), EXPOSURES (50 a request), METRICS (0: that many secondary metrics on
# events no workload sends), MEASURE_METRICS (1; 0 gives the metrics workload's
# campaign no metric), LOG_LEVEL (info: one line per request,
# as in production), BIN (./service), SOAK_USERS and SOAK_EVENTS (1000000),
# OUT (the current directory: where profiles and traces are saved).
set -euo pipefail

# Profiles go where the caller stands, before the cd to the repository.
export OUT
OUT=$(cd "${OUT:-$PWD}" && pwd)
cd "$(dirname "$0")/.."

MODE=${1:-load}
STORE=${STORE:-sqlite}
if [ "$MODE" = scale ]; then
	STORE=postgres
fi
if [ "$STORE" = postgres ] && [ -z "${PG_DATADIR:-}" ]; then
	# A server of its own: the figures need its durability settings and
	# its pinning, which a shared server's would not have.
	unset SERVICE_TEST_POSTGRES_URL
	if [ "$MODE" = profile ]; then
		# The profile reports what PostgreSQL spent on each statement.
		export PG_SETTINGS="${PG_SETTINGS:-} -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
	fi
	exec env PG_DURABLE=1 ./scripts/with-postgres.sh "$0" "$@"
fi
BIN=${BIN:-./service}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONNS=${CONNS:-64}
USERS=${USERS:-2000}
EXPOSURES=${EXPOSURES:-50}
SOAK_USERS=${SOAK_USERS:-1000000}
SOAK_EVENTS=${SOAK_EVENTS:-1000000}
ADDR=127.0.0.1:18181
ADDR2=127.0.0.1:18185
BARE_ADDR=127.0.0.1:18182
PPROF_ADDR=127.0.0.1:18183
METRICS_ADDR=127.0.0.1:18184

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

# Pinning: the server side on CPU 1 with GOMAXPROCS=1, wrk on CPU 0.
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	SERVER_PIN=(taskset -c 1 env GOMAXPROCS=1)
	LOAD_PIN=(taskset -c 0)
	PINNED="service and bare on CPU 1 with GOMAXPROCS=1, wrk on CPU 0"
else
	SERVER_PIN=(env GOMAXPROCS=1)
	LOAD_PIN=()
	PINNED="not pinned ($(nproc) CPU): service and bare with GOMAXPROCS=1"
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

# wait_http URL: poll until URL answers anything over HTTP, for at most 10 s.
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

# Profiles and metrics only for the profile mode: the measured runs use
# serve's defaults.
PROFILE_FLAGS=()
if [ "$MODE" = profile ]; then
	PROFILE_FLAGS=(--pprof-addr "$PPROF_ADDR" --metrics-addr "$METRICS_ADDR")
fi

DB=$TMP/load.db
if [ "$STORE" = postgres ]; then
	# The postmaster forks a backend per connection, which inherits its
	# pinning; its helpers (checkpointer, WAL writer, …) run already.
	pm=$(head -1 "$PG_DATADIR/postmaster.pid")
	for pid in "$pm" $(pgrep -P "$pm"); do
		taskset -a -p -c 1 "$pid" >/dev/null
	done
	# A fresh cluster has no spare WAL segments: each time one fills, the
	# committing backend creates the next, writing 16 MiB of zeros and
	# syncing them, a commit of tens of milliseconds. A server that has run
	# recycles its old segments instead, so the run starts from one: about
	# 500 MiB of WAL written and checkpointed leave that many segments
	# ready, more than the rounds write.
	"$PG_BINDIR/psql" -q "$SERVICE_TEST_POSTGRES_URL" -c "CREATE TABLE wal_warm AS SELECT g FROM generate_series(1, 8000000) g" \
		-c "DROP TABLE wal_warm" -c "CHECKPOINT"
	"$PG_BINDIR/psql" -q "$SERVICE_TEST_POSTGRES_URL" -c "CREATE DATABASE load"
	DB=${SERVICE_TEST_POSTGRES_URL/\/postgres\?//load?}
	PINNED="$PINNED; PostgreSQL also on CPU 1"
fi
setup() {
	local app cv1 cv2 campaign
	# migrate creates the file; apps create refuses one that is not there.
	"$BIN" migrate --db "$DB" >/dev/null
	app=$("$BIN" apps create --db "$DB" --name load --plan enterprise --rate-limit 100000000)
	APP_ID=$(field id "$app")
	ADMIN=$(field key "$("$BIN" keys create --db "$DB" --app "$APP_ID" --role admin)")
	CLIENT=$(field key "$("$BIN" keys create --db "$DB" --app "$APP_ID" --role client)")

	# exec chain (taskset, env): $! is the service's own pid.
	# Info lines (one per request) are dropped by a filter on the load CPU,
	# so a soak does not fill the disk; the service still writes each one.
	"${SERVER_PIN[@]}" "$BIN" serve --db "$DB" --addr "$ADDR" --log-level "${LOG_LEVEL:-info}" "${PROFILE_FLAGS[@]}" \
		>/dev/null 2> >("${LOAD_PIN[@]}" grep -v '"level":"INFO"' >"$TMP/service.log") &
	SERVICE_PID=$!
	PIDS+=("$SERVICE_PID")
	go build -o "$TMP/bare" ./scripts/bare
	"${SERVER_PIN[@]}" "$TMP/bare" --addr "$BARE_ADDR" 2>"$TMP/bare.log" &
	PIDS+=($!)
	wait_http "http://$ADDR/healthz"
	wait_http "http://$BARE_ADDR/"

	cv1=$(field id "$(api POST "/apps/$APP_ID/content" '{"name":"Control","status":"published","items":[{"type":"text","content":"Hello","styles":{}}]}')")
	cv2=$(field id "$(api POST "/apps/$APP_ID/content" '{"name":"Treatment","status":"published","items":[{"type":"text","content":"Hi there","styles":{"fontSize":18}}]}')")
	# METRICS=N gives the campaign N secondary metrics on events the
	# workloads never send: what such metrics cost an event that is not
	# theirs (nothing, beyond one map lookup, is the aim).
	local metrics_json="" mids=() i
	for ((i = 1; i <= ${METRICS:-0}; i++)); do
		mids+=("$(field id "$(api POST "/apps/$APP_ID/metrics" "{\"key\":\"other-$i\",\"name\":\"Other $i\",\"type\":\"count\",\"eventId\":\"other-$i\"}")")")
	done
	if [ ${#mids[@]} -gt 0 ]; then
		metrics_json=",\"metrics\":{\"secondary\":[$(IFS=,; echo "${mids[*]}")]}"
	fi
	campaign=$(api POST "/apps/$APP_ID/campaigns" "{\"name\":\"Load\",\"status\":\"active\",\"goalEventId\":\"purchase\",\"endDate\":\"2099-01-01T00:00:00Z\"$metrics_json,\"variants\":[{\"contentViewId\":$cv1},{\"contentViewId\":$cv2}]}")
	CAMPAIGN_ID=$(field id "$campaign")
	VARIANT_URL="http://$ADDR/v1/apps-external/$APP_ID/campaigns/$CAMPAIGN_ID/variant"
	# The campaign named Load has the key load.
	OFREP_URL="http://$ADDR/ofrep/v1/evaluate/flags/load"
	EVENTS_URL="http://$ADDR/v1/apps/$APP_ID/events"

	# Pre-assign the returning users.
	preassign "$VARIANT_URL" '"userId":"u-%d"'
	expect_impressions "$CAMPAIGN_ID" "$USERS" "pre-assigned users"

	# The variant ids in ascending order, the order of the hash's ranges.
	read -r -a VARIANT_IDS <<<"$(printf '%s' "$campaign" | grep -o '{"id":[0-9]*,"campaignId"' | grep -o '[0-9]*' | sort -n | tr '\n' ' ')"

	if wants metrics; then
		# Five metrics of the kinds a campaign measures; the workload's
		# events each move one or two of them.
		local views revenue orders carts latency
		views=$(metric '{"key":"views","name":"Page views","type":"count","eventId":"page_view"}')
		revenue=$(metric '{"key":"revenue","name":"Revenue","type":"sum","eventId":"order","property":"revenue","cap":500}')
		orders=$(metric '{"key":"orders-7d","name":"Ordered within a week","type":"conversion","eventId":"order","windowHours":168}')
		carts=$(metric '{"key":"carts","name":"Added to cart","type":"count","eventId":"add_to_cart","windowHours":24}')
		latency=$(metric '{"key":"latency","name":"Page time","type":"sum","eventId":"page_view","property":"ms","direction":"decrease","cap":10000}')
		# MEASURE_METRICS=0 leaves them off the campaign: the same events,
		# users and goal, judged on no metric. Set against a run with them,
		# it shows what the metrics cost beyond the events themselves.
		local measured=",\"metrics\":{\"secondary\":[$views,$revenue,$orders],\"guardrails\":[$carts,$latency]}"
		if [[ ${MEASURE_METRICS:-1} == 0 ]]; then
			measured=""
		fi
		METRICS_CAMPAIGN_ID=$(field id "$(api POST "/apps/$APP_ID/campaigns" "{\"name\":\"Metrics\",\"status\":\"active\",\"goalEventId\":\"order\",\"endDate\":\"2099-01-01T00:00:00Z\"$measured,\"variants\":[{\"contentViewId\":$cv1},{\"contentViewId\":$cv2}]}")")
		preassign "http://$ADDR/v1/apps-external/$APP_ID/campaigns/$METRICS_CAMPAIGN_ID/variant" '"userId":"m-%d"'
		expect_impressions "$METRICS_CAMPAIGN_ID" "$USERS" "metrics campaign users"
	fi
	if wants identities || wants identities_events; then
		# Each session is assigned first, then its user signs in: the user
		# takes the session's assignment, without an impression of its own.
		IDENT_CAMPAIGN_ID=$(field id "$(api POST "/apps/$APP_ID/campaigns" "{\"name\":\"Identities\",\"status\":\"active\",\"goalEventId\":\"checkout\",\"endDate\":\"2099-01-01T00:00:00Z\",\"variants\":[{\"contentViewId\":$cv1},{\"contentViewId\":$cv2}]}")")
		IDENT_URL="http://$ADDR/v1/apps-external/$APP_ID/campaigns/$IDENT_CAMPAIGN_ID/variant"
		preassign "$IDENT_URL" '"sessionId":"is-%d"'
		preassign "$IDENT_URL" '"userId":"iu-%d","sessionId":"is-%d"'
		expect_impressions "$IDENT_CAMPAIGN_ID" "$USERS" "linked pairs (one impression each)"
		# A linked session refuses another user, and writes nothing.
		local code
		code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $CLIENT" -H 'Content-Type: application/json' \
			--data '{"userId":"someone-else","sessionId":"is-0"}' "http://$ADDR/v1/apps-external/$APP_ID/identify")
		if [ "$code" != 409 ]; then
			echo "load.sh: is-0 is not linked (identify as another user answered $code, want 409)" >&2
			exit 1
		fi
	fi
}

# wants WORKLOAD: whether WORKLOAD is among the ones to run.
wants() {
	[[ " ${WORKLOADS[*]} " == *" $1 "* ]]
}

# metric JSON: creates a metric of the app; prints its id.
metric() {
	field id "$(api POST "/apps/$APP_ID/metrics" "$1")"
}

# preassign URL FIELDS: one variant request for each of the USERS users,
# whose body is {FIELDS} with every %d replaced by the user's number; one
# curl process, many requests.
preassign() {
	local cfg=$TMP/preassign.curl i fields
	: >"$cfg"
	for i in $(seq 0 $((USERS - 1))); do
		# "next" separates transfers; options after it apply to the next one.
		[ "$i" -gt 0 ] && echo next >>"$cfg"
		fields=${2//%d/$i}
		printf 'url = "%s"\nrequest = "POST"\nheader = "Authorization: Bearer %s"\nheader = "Content-Type: application/json"\ndata = "{%s}"\noutput = "/dev/null"\nfail\nsilent\nshow-error\n' \
			"$1" "$CLIENT" "${fields//\"/\\\"}" >>"$cfg"
	done
	curl --no-progress-meter --parallel --parallel-max 16 -K "$cfg"
}

# expect_impressions CAMPAIGN N WHAT: exits unless CAMPAIGN has N impressions.
expect_impressions() {
	local n
	n=$(impressions "$1")
	if [ "$n" != "$2" ]; then
		echo "load.sh: $3: $n impressions, want $2" >&2
		exit 1
	fi
}

impressions() {
	field totalImpressions "$(curl -fsS -H "Authorization: Bearer $ADMIN" "http://$ADDR/v1/campaigns/${1:-$CAMPAIGN_ID}/analytics")"
}

# lua NAME BODY_EXPR [STOP_AFTER] [REFUSED]: writes a wrk script whose
# request body is the Lua expression BODY_EXPR (with `n`, a counter, in
# scope) and whose done() prints one RESULT line: requests/s, p99 in ms,
# errors, requests, then p50, p90, p99.9 and the maximum in ms.
# With STOP_AFTER, the run ends after that many responses. With REFUSED, a
# response whose body contains that text counts as an error (wrk itself
# counts only statuses other than 2xx and 3xx); without it, wrk reads no
# body into Lua.
lua() {
	local f=$TMP/$1.lua response=""
	if [ -n "${3:-}" ]; then
		# wrk runs for its whole duration even when its thread stops, so the
		# script also leaves a mark for counted() to end wrk by SIGINT.
		response="answered = answered + 1; if answered == $3 then io.open('$f.done', 'w'):close(); wrk.thread:stop() end"
	fi
	if [ -n "${4:-}" ]; then
		response="$response if body:find('$4', 1, true) then refused = refused + 1 end"
	fi
	if [ -n "$response" ]; then
		response="function response(status, headers, body) $response end"
	fi
	cat >"$f" <<EOF
local counter = 0
answered, refused = 0, 0
local threads = {}
function setup(thread)
	table.insert(threads, thread)
end
function init(args)
	wrk.method = "POST"
	wrk.headers["Content-Type"] = "application/json"
	wrk.headers["Authorization"] = "Bearer $CLIENT"
end
-- fnv1a32 over a string of ASCII characters (one UTF-16 unit each), as
-- the assignment rules define it (docs/api.md).
local function fnv1a32(s)
	local h = 0x811c9dc5
	for i = 1, #s do
		h = bit.bxor(h, s:byte(i))
		h = bit.tobit(h + bit.lshift(h, 1) + bit.lshift(h, 4) + bit.lshift(h, 7) + bit.lshift(h, 8) + bit.lshift(h, 24))
	end
	if h < 0 then
		h = h + 4294967296
	end
	return h
end
-- exposures(n, tag): a batch of $EXPOSURES fresh users of the first
-- campaign, each with the variant of its hash (50/50 between the two).
function exposures(n, tag)
	local items = {}
	for j = 1, $EXPOSURES do
		local key = "x-" .. tag .. "-" .. n .. "-" .. j
		local v = ${VARIANT_IDS[1]:-0}
		if fnv1a32(tostring(fnv1a32("${CAMPAIGN_ID:-0}:" .. key))) % 10000 < 5000 then
			v = ${VARIANT_IDS[0]:-0}
		end
		items[j] = string.format('{"campaignId":${CAMPAIGN_ID:-0},"variantId":%d,"userId":"%s"}', v, key)
	end
	return '{"exposures":[' .. table.concat(items, ",") .. ']}'
end
function request()
	counter = counter + 1
	local n = counter
	return wrk.format(nil, nil, nil, $2)
end
$response
function done(summary, latency, requests)
	local e = summary.errors
	local bad = 0
	for _, t in ipairs(threads) do
		bad = bad + (t:get("refused") or 0)
	end
	io.write(string.format("RESULT %.0f %.2f %d %d %.2f %.2f %.2f %.2f\n",
		summary.requests / (summary.duration / 1e6), latency:percentile(99) / 1000,
		e.connect + e.read + e.write + e.status + e.timeout + bad, summary.requests,
		latency:percentile(50) / 1000, latency:percentile(90) / 1000,
		latency:percentile(99.9) / 1000, latency.max / 1000))
end
EOF
	echo "$f"
}

# script NAME WORKLOAD TAG: the wrk script of WORKLOAD, its new users
# tagged TAG.
script() {
	lua "$1" "$(body "$2" "$3")" "" "$(refused "$2")"
}

# wrkrun DURATION URL SCRIPT: one pinned wrk run; prints its RESULT line.
wrkrun() {
	"${LOAD_PIN[@]}" wrk -t1 -c"$CONNS" -d"$1" --latency -s "$3" "$2" | grep '^RESULT'
}

# counted URL SCRIPT: a pinned wrk run of SCRIPT (made with STOP_AFTER)
# until its count is answered; prints its RESULT line.
counted() {
	rm -f "$2.done"
	"${LOAD_PIN[@]}" wrk -t1 -c"$CONNS" -d24h --latency -s "$2" "$1" >"$2.out" &
	local pid=$!
	until [ -e "$2.done" ]; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "load.sh: wrk ended early" >&2
			exit 1
		fi
		sleep 0.2
	done
	kill -INT "$pid"
	wait "$pid" || true
	grep '^RESULT' "$2.out"
}

# body NAME TAG: the request body expression of workload NAME; TAG keeps
# the new users of each run apart.
body() {
	case $1 in
	bare | variant_returning) echo "string.format('{\"userId\":\"u-%d\"}', n % $USERS)" ;;
	ofrep) echo "string.format('{\"context\":{\"targetingKey\":\"u-%d\"}}', n % $USERS)" ;;
	variant_new) echo "string.format('{\"userId\":\"new-$2-%d\"}', n)" ;;
	events) echo "string.format('{\"eventId\":\"purchase\",\"userId\":\"u-%d\",\"metadata\":{\"amount\":%d}}', n % $USERS, n % 100)" ;;
	# Of every four events: two page views (views, latency), one added to
	# cart (carts), one order (revenue, orders-7d and the goal).
	metrics) echo "({'{\"eventId\":\"page_view\",\"userId\":\"m-%d\",\"metadata\":{\"ms\":%d}}', '{\"eventId\":\"add_to_cart\",\"userId\":\"m-%d\",\"metadata\":{\"n\":%d}}', '{\"eventId\":\"page_view\",\"userId\":\"m-%d\",\"metadata\":{\"ms\":%d}}', '{\"eventId\":\"order\",\"userId\":\"m-%d\",\"metadata\":{\"revenue\":%d}}'})[n % 4 + 1]:format(n % $USERS, n % 1000)" ;;
	# Nine in ten a pair linked in setup, one in ten a fresh pair.
	identities) echo "(n % 10 == 0) and string.format('{\"userId\":\"iu-$2-%d\",\"sessionId\":\"is-$2-%d\"}', n, n) or string.format('{\"userId\":\"iu-%d\",\"sessionId\":\"is-%d\"}', n % $USERS, n % $USERS)" ;;
	identities_events) echo "string.format('{\"eventId\":\"checkout\",\"sessionId\":\"is-%d\",\"metadata\":{\"amount\":%d}}', n % $USERS, n % 100)" ;;
	exposures) echo "exposures(n, '$2')" ;;
	esac
}

# refused NAME: the text of an answer of workload NAME that is a failure
# despite its 200, or nothing.
refused() {
	case $1 in
	exposures) echo '"recorded":false' ;;
	esac
}

url() {
	case $1 in
	bare) echo "http://$BARE_ADDR/" ;;
	variant_returning | variant_new) echo "$VARIANT_URL" ;;
	ofrep) echo "$OFREP_URL" ;;
	events | metrics | identities_events) echo "$EVENTS_URL" ;;
	identities) echo "$IDENT_URL" ;;
	exposures) echo "http://$ADDR/v1/apps-external/$APP_ID/exposures" ;;
	*)
		echo "load.sh: unknown workload $1" >&2
		exit 2
		;;
	esac
}

peak_rss_mib() {
	awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/${1:-$SERVICE_PID}/status"
}

# rss_report: the service's peak RSS, and its checkpointer child's (a
# process of its own: see docs/operations.md).
rss_report() {
	local child
	echo "  service peak RSS (VmHWM): $(peak_rss_mib) MiB"
	child=$(pgrep -P "$SERVICE_PID" -f checkpointer | head -1 || true)
	if [ -n "$child" ]; then
		echo "  checkpointer child peak RSS (VmHWM): $(peak_rss_mib "$child") MiB"
	fi
}

# median of the arguments (numbers).
median() {
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

read -r -a WORKLOADS <<<"${WORKLOADS:-variant_returning ofrep variant_new events metrics identities identities_events exposures}"

load() {
	declare -A RATIOS P99S RPSS
	local r s i line rps p99 errs bare0 bare1 n=${#WORKLOADS[@]}
	local -a got
	for r in $(seq "$ROUNDS"); do
		echo "round $r:"
		# bare opens and closes the round: a workload's ratio is to bare
		# as it was when the workload ran, drawn on a line between the
		# two, since a shared machine's speed drifts within a round.
		got=()
		for s in bare "${WORKLOADS[@]}" bare; do
			wrkrun "$WARMUP" "$(url $s)" "$(script "$s-w$r" "$s" "w$r")" >/dev/null
			line=$(wrkrun "$DURATION" "$(url $s)" "$(script "$s-$r" "$s" "r$r")")
			read -r _ rps p99 errs _ p50 p90 _ <<<"$line"
			printf '  %-18s %8s req/s   p50 %6s   p90 %6s   p99 %6s ms   errors %s\n' "$s" "$rps" "$p50" "$p90" "$p99" "$errs"
			P99S[$s]+="$p99 "
			RPSS[$s]+="$rps "
			got+=("$rps")
		done
		bare0=${got[0]} bare1=${got[n + 1]}
		RATIOS[bare]+="1.000 "
		for i in $(seq "$n"); do
			s=${WORKLOADS[i - 1]}
			RATIOS[$s]+="$(awk -v a="${got[i]}" -v b0="$bare0" -v b1="$bare1" -v i="$i" -v n="$n" \
				'BEGIN { printf "%.3f", a / (b0 + (b1 - b0) * i / (n + 1)) }') "
		done
	done
	echo
	echo "median of $ROUNDS rounds (wrk -t1 -c$CONNS -d$DURATION after $WARMUP warm-up; $PINNED):"
	printf '  %-18s %8s %10s %10s\n' workload "req/s" "ratio" "p99 ms"
	for s in bare "${WORKLOADS[@]}"; do
		# shellcheck disable=SC2086
		printf '  %-18s %8s %10s %10s\n' "$s" "$(median ${RPSS[$s]})" "$(median ${RATIOS[$s]})" "$(median ${P99S[$s]})"
	done
	if [ -n "${RPSS[ofrep]:-}" ] && [ -n "${RPSS[variant_returning]:-}" ]; then
		# An OpenFeature evaluation of a returning user should cost what the
		# variant route's answer costs: 0.9 of its throughput at least.
		# shellcheck disable=SC2086
		echo "  ofrep / variant_returning: $(awk -v a="$(median ${RPSS[ofrep]})" -v b="$(median ${RPSS[variant_returning]})" 'BEGIN { printf "%.3f", a / b }') (0.9 or more expected)"
	fi
	if [ -n "${RPSS[exposures]:-}" ]; then
		# An exposure is a new user's assignment and impression, as a
		# variant_new request is: a batch must cost less per item than as
		# many variant requests.
		# shellcheck disable=SC2086
		local items
		items=$(awk -v a="$(median ${RPSS[exposures]})" -v n="$EXPOSURES" 'BEGIN { printf "%.0f", a * n }')
		printf '  exposures: %s items/s (%s a request)' "$items" "$EXPOSURES"
		if [ -n "${RPSS[variant_new]:-}" ]; then
			# shellcheck disable=SC2086
			printf '; variant_new %s req/s; items / variant_new requests: %s (more than 1 expected)' "$(median ${RPSS[variant_new]})" \
				"$(awk -v a="$items" -v b="$(median ${RPSS[variant_new]})" 'BEGIN { printf "%.2f", a / b }')"
		fi
		echo
	fi
	rss_report
}

db_size_mib() {
	if [ "$STORE" = postgres ]; then
		"$PG_BINDIR/psql" -Atq "$DB" -c "SELECT round(pg_database_size('load') / 1048576.0, 1)"
		return
	fi
	du -cb "$DB" "$DB-wal" "$DB-shm" 2>/dev/null | awk 'END { printf "%.1f", $1 / 1048576 }'
}

soak() {
	local line start
	echo "soak: $SOAK_USERS new users, then $SOAK_EVENTS events ($PINNED)"
	start=$SECONDS
	line=$(counted "$VARIANT_URL" "$(lua soak-users "$(body variant_new soak)" "$SOAK_USERS")")
	echo "  new users: $(awk '{ printf "%d requests, %d req/s, p99 %s ms, errors %d", $5, $2, $3, $4 }' <<<"$line") in $((SECONDS - start)) s"
	start=$SECONDS
	line=$(counted "$EVENTS_URL" "$(lua soak-events "string.format('{\"eventId\":\"purchase\",\"userId\":\"new-soak-%d\",\"metadata\":{\"amount\":%d}}', n % $SOAK_USERS + 1, n % 100)" "$SOAK_EVENTS")")
	echo "  events:    $(awk '{ printf "%d requests, %d req/s, p99 %s ms, errors %d", $5, $2, $3, $4 }' <<<"$line") in $((SECONDS - start)) s"
	echo "  impressions counted: $(impressions)"
	echo "at the end:"
	for s in "${WORKLOADS[@]}"; do
		line=$(wrkrun "$DURATION" "$(url $s)" "$(script "$s-end" "$s" end)")
		printf '  %-18s %s\n' "$s" "$(awk '{ printf "%d req/s, p99 %s ms, errors %d", $2, $3, $4 }' <<<"$line")"
	done
	rss_report
	echo "  database size (with WAL): $(db_size_mib) MiB"
}

# profile WORKLOAD: a warm-up, then a CPU profile over one measured run.
profile() {
	local s=$1
	url "$s" >/dev/null
	wrkrun "$WARMUP" "$(url "$s")" "$(script "$s-w" "$s" w)" >/dev/null
	local secs=${DURATION%s} file
	if [ -n "${TRACE:-}" ]; then
		file=$OUT/$s.trace
		curl -fsS -o "$file" "http://$PPROF_ADDR/debug/pprof/trace?seconds=3" &
	else
		file=$OUT/$s.pprof
		curl -fsS -o "$file" "http://$PPROF_ADDR/debug/pprof/profile?seconds=$((secs - 1))" &
	fi
	local pid=$!
	if [ "$STORE" = postgres ]; then
		"$PG_BINDIR/psql" -Atq "$DB" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "SELECT pg_stat_statements_reset()" >/dev/null
	fi
	wrkrun "$DURATION" "$(url "$s")" "$(script "$s-p" "$s" p)"
	wait "$pid"
	if [ "$STORE" = postgres ]; then
		# Per statement over the measured run: calls, rows, total and mean
		# execution time, and the share of all statements' time.
		echo "PostgreSQL statements over the run (pg_stat_statements, by total time):"
		"$PG_BINDIR/psql" -q "$DB" -P pager=off -c "SELECT calls, rows, round(total_exec_time::numeric, 1) AS total_ms,
			round(mean_exec_time::numeric, 3) AS mean_ms, round((100 * total_exec_time / sum(total_exec_time) OVER ())::numeric, 1) AS pct,
			left(regexp_replace(query, '\s+', ' ', 'g'), 110) AS query
			FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'load') ORDER BY total_exec_time DESC LIMIT 15"
	fi
	if [ -n "${TRACE:-}" ]; then
		echo "trace: $file (go tool trace $file)"
	else
		echo "profile: $file (go tool pprof -top $BIN $file)"
	fi
	echo "group commits since start (size, then seconds):"
	curl -fsS "http://$METRICS_ADDR/metrics" | grep -E '^service_store_group_commit_(size|duration_seconds)_(bucket|sum|count)|^go_gc_duration_seconds_count|^go_memstats_(heap_inuse|next_gc)_bytes|^go_gc_gogc|^go_gc_gomemlimit' | grep -v 'le="+Inf"'

}

# server_ticks PID...: the CPU time (clock ticks) the processes and, for
# PostgreSQL's postmaster, its children have used so far.
server_ticks() {
	local pm pids=("$@") t=0 pid
	pm=$(head -1 "$PG_DATADIR/postmaster.pid")
	pids+=("$pm" $(pgrep -P "$pm"))
	for pid in "${pids[@]}"; do
		t=$((t + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}

# busy_ticks: the CPU time every CPU has spent busy so far.
busy_ticks() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

# cores START_SERVER START_BUSY END_SERVER END_BUSY SECONDS: the servers'
# and everything else's (wrk) use of the CPUs, in cores.
cores() {
	awk -v s="$(($3 - $1))" -v b="$(($4 - $2))" -v d="$5" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.2f %.2f", s / hz / d, (b - s) / hz / d }'
}

# scale: the scaling of each workload from one replica to two. First one
# replica, pinned as for `load` (service and PostgreSQL on CPU 1, wrk on
# CPU 0); then a second replica joins and every process may use both CPUs:
# the replicas (GOMAXPROCS=1 each), PostgreSQL and one wrk per replica, each
# with half the connections, whose rates are summed. There is no third CPU
# for wrk, so the second setup's servers get what wrk leaves of two cores.
scale() {
	declare -A ONE TWO P1 P2 C1 C2
	local r s line rps p99 rps2 p992 tag s0 b0 secs=${DURATION%s}
	for r in $(seq "$ROUNDS"); do
		for s in "${WORKLOADS[@]}"; do
			wrkrun "$WARMUP" "$(url $s)" "$(script "$s-w$r" "$s" "w$r")" >/dev/null
			s0=$(server_ticks "$SERVICE_PID") b0=$(busy_ticks)
			line=$(wrkrun "$DURATION" "$(url $s)" "$(script "$s-$r" "$s" "r$r")")
			read -r _ rps p99 _ <<<"$line"
			read -r sc _ <<<"$(cores "$s0" "$b0" "$(server_ticks "$SERVICE_PID")" "$(busy_ticks)" "$secs")"
			printf '  round %s, one replica:  %-18s %s; servers %s cores\n' "$r" "$s" "$line" "$sc"
			ONE[$s]+="$rps "
			P1[$s]+="$p99 "
			C1[$s]+="$sc "
		done
	done
	# PROFILE=1: CPU profiles of the second replica during the measured
	# runs, saved as scale-WORKLOAD-ROUND.pprof in the current directory.
	local pflags=()
	if [ -n "${PROFILE:-}" ]; then
		pflags=(--pprof-addr "$PPROF_ADDR")
	fi
	env GOMAXPROCS=1 "$BIN" serve --db "$DB" --addr "$ADDR2" --log-level "${LOG_LEVEL:-info}" "${pflags[@]}" >/dev/null 2>"$TMP/service2.log" &
	PIDS+=($!)
	local second=$!
	wait_http "http://$ADDR2/healthz"
	taskset -a -p -c 0,1 "$SERVICE_PID" >/dev/null
	taskset -a -p -c 0,1 "$second" >/dev/null
	local pm
	pm=$(head -1 "$PG_DATADIR/postmaster.pid")
	for pid in "$pm" $(pgrep -P "$pm"); do
		taskset -a -p -c 0,1 "$pid" >/dev/null
	done
	local half=$((CONNS / 2))
	for r in $(seq "$ROUNDS"); do
		for s in "${WORKLOADS[@]}"; do
			for tag in w m; do
				if [ $tag = m ]; then
					s0=$(server_ticks "$SERVICE_PID" "$second") b0=$(busy_ticks)
					if [ -n "${PROFILE:-}" ]; then
						curl -fsS -o "$OUT/scale-$s-$r.pprof" "http://$PPROF_ADDR/debug/pprof/profile?seconds=$((secs - 1))" &
					fi
				fi
				wrk -t1 -c"$half" -d"$([ $tag = w ] && echo "$WARMUP" || echo "$DURATION")" --latency \
					-s "$(script "$s-a$tag$r" "$s" "a$tag$r")" "$(url $s)" | grep '^RESULT' >"$TMP/a.out" &
				local a=$!
				wrk -t1 -c"$half" -d"$([ $tag = w ] && echo "$WARMUP" || echo "$DURATION")" --latency \
					-s "$(script "$s-b$tag$r" "$s" "b$tag$r")" "$(url $s | sed "s/$ADDR/$ADDR2/")" | grep '^RESULT' >"$TMP/b.out" &
				wait $a $!
			done
			read -r sc oc <<<"$(cores "$s0" "$b0" "$(server_ticks "$SERVICE_PID" "$second")" "$(busy_ticks)" "$secs")"
			read -r _ rps p99 _ <"$TMP/a.out"
			read -r _ rps2 p992 _ <"$TMP/b.out"
			printf '  round %s, two replicas: %-18s %s | %s; servers %s cores, wrk and the rest %s\n' "$r" "$s" "$(cat "$TMP/a.out")" "$(cat "$TMP/b.out")" "$sc" "$oc"
			C2[$s]+="$sc "
			TWO[$s]+="$(awk -v a="$rps" -v b="$rps2" 'BEGIN { printf "%.0f", a + b }') "
			P2[$s]+="$(awk -v a="$p99" -v b="$p992" 'BEGIN { print (a > b) ? a : b }') "
		done
	done
	echo "(RESULT: req/s, p99 ms, errors, requests, p50, p90, p99.9 and max ms)"
	echo "median of $ROUNDS rounds (wrk -c$CONNS in all, -d$DURATION after $WARMUP warm-up):"
	echo "  one replica: service and PostgreSQL on CPU 1, wrk on CPU 0"
	echo "  two replicas: both replicas (GOMAXPROCS=1 each), PostgreSQL and two wrk (-c$half each) on CPUs 0-1"
	echo "  (cores: CPU time of the replicas and PostgreSQL over the run; per core: req/s per such core)"
	printf '  %-18s %10s %7s %7s %10s %7s %7s %8s %9s\n' workload "1: req/s" "p99 ms" cores "2: req/s" "p99 ms" cores scaling "per core"
	for s in "${WORKLOADS[@]}"; do
		# shellcheck disable=SC2086
		local o=$(median ${ONE[$s]}) t=$(median ${TWO[$s]}) c1=$(median ${C1[$s]}) c2=$(median ${C2[$s]})
		printf '  %-18s %10s %7s %7s %10s %7s %7s %8s %9s\n' "$s" "$o" "$(median ${P1[$s]})" "$c1" "$t" "$(median ${P2[$s]})" "$c2" \
			"$(awk -v a="$t" -v b="$o" 'BEGIN { printf "%.2fx", a / b }')" \
			"$(awk -v a="$t" -v b="$o" -v x="$c1" -v y="$c2" 'BEGIN { printf "%.2fx", (a / y) / (b / x) }')"
	done
	echo "  PostgreSQL: $("$PG_BINDIR/psql" -Atq "$DB" -c "SELECT format('%s deadlocks, %s commits, %s rollbacks', deadlocks, xact_commit, xact_rollback) FROM pg_stat_database WHERE datname = 'load'")"
	if [ -s "$TMP/service2.log" ]; then
		echo "second replica's log (warnings and errors):"
		grep -v '"level":"INFO"' "$TMP/service2.log" | tail -5
	fi
}

setup
echo "store $STORE; $(nproc) CPUs; $USERS pre-assigned users; log level ${LOG_LEVEL:-info}"
case $MODE in
load) load ;;
soak) soak ;;
scale) scale ;;
profile) profile "${2:?profile needs a workload: ${WORKLOADS[*]}}" ;;
*)
	echo "load.sh: unknown mode $MODE (load, soak or profile)" >&2
	exit 2
	;;
esac
if [ -s "$TMP/service.log" ]; then
	echo
	echo "service log (warnings and errors):"
	tail -20 "$TMP/service.log"
fi
