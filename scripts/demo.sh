#!/usr/bin/env bash
# make demo: the main job end to end on the embedded default database, on
# files clearing generates itself. Each run uses a fresh tenant, so it can be
# run again and again on the same database.
set -uo pipefail

clearing=${1:-bin/clearing}
dir=$(mktemp -d "${TMPDIR:-/tmp}/clearing-demo.XXXXXX")
trap 'rm -rf "$dir"' EXIT
tenant="demo-$(date +%Y%m%d-%H%M%S)"
export CLEARING_LOG_LEVEL=${CLEARING_LOG_LEVEL:-warn}
# A key of its own keeps the demo's account hashes apart from real ones.
export CLEARING_PII_KEY=${CLEARING_PII_KEY:-clearing-demo-key}

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "${*:2}"; }

# run STEP EXPECTED_EXIT COMMAND...: show the command and its output, and
# stop the demo when it exits otherwise than expected.
run() {
	local title=$1 want=$2
	shift 2
	step "$title" "clearing --tenant $tenant ${*}"
	"$clearing" --tenant "$tenant" "$@"
	local got=$?
	if [ "$got" != "$want" ]; then
		echo "demo: expected exit $want, got $got" >&2
		exit 1
	fi
	echo "(exit $got)"
}

"$clearing" generate demo "$dir" >/dev/null || exit 1
. "$dir/keys.env"
echo "clearing demo: tenant $tenant, files in $dir"

run "Ingest a day's ACH file" 0 ingest "$dir/day1.ach"
run "Ingest it again: every record is a duplicate, nothing posts" 0 ingest "$dir/day1.ach"
run "A corrected re-upload: new file header, the same entries plus six new ones; only the new ones post" 0 \
	ingest "$dir/day1-corrected.ach"
run "A file restating one amount under the same key: a conflict, not posted, exit 3" 3 \
	ingest "$dir/day1-restated.ach"
run "A return file: each return reverses its original" 0 ingest "$dir/returns.ach"
run "Everything known about a returned entry" 0 lookup "$RETURNED_KEY"
run "The conflict, explained" 0 lookup "$CHANGED_KEY"
run "Balances, computed from the legs" 0 balance --account 'settlement:*'
run "The ledger's invariants" 0 ledger verify
run "The bank's statement, imported as statement lines (never postings)" 0 \
	statement import --source ach "$dir/statement.bai2"
run "Reconcile the day: every difference classified and explained; breaks exit 3" 3 \
	reconcile --source ach --from "$FROM" --to "$TO"
run "The corrections reconciliation proposes" 0 corrections list --status proposed
ids=$("$clearing" --tenant "$tenant" -o csv corrections list --status proposed | awk -F, 'NR > 1 { print $1 }')
run "An operator approves them: each posts once, with kind correction" 0 \
	corrections approve $ids --operator alice --reason "confirmed with the bank's statement"
run "Approving again posts nothing more" 0 corrections approve $ids --operator alice --reason "again"
run "Reconcile again: the corrected breaks close; what is left still needs a person" 3 \
	reconcile --source ach --from "$FROM" --to "$TO"
step "The same report as a self-contained HTML page for finance" "clearing report latest -o html > $dir/report.html"
"$clearing" --tenant "$tenant" report latest -o html > "$dir/report.html"
echo "wrote $(wc -c < "$dir/report.html") bytes; open it in a browser"
run "Balances by kind of posting: corrections show apart from clearing and returns" 0 balance --by-kind --account 'settlement:*'
run "Run history" 0 runs
echo
echo "demo done: tenant $tenant"
