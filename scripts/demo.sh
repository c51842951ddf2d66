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
# The demo runs on the embedded cluster, where it can create login roles.
unset CLEARING_DATABASE_URL DATABASE_URL
home=${CLEARING_HOME:-}
if [ -z "$home" ]; then
	if [ "$(id -u)" = 0 ]; then home=/var/lib/clearing; else home=$HOME/.local/share/clearing; fi
fi

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
run "A day of card clearing (Mastercard IPM: 1014-blocked, EBCDIC) with chargebacks and reversals" 0 \
	ingest "$dir/cards.ipm"
run "The same messages again, unblocked and in ASCII: detected, every one a duplicate" 0 \
	ingest "$dir/cards-resent.ipm"
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
run "The admin (the owner of the schema) sets the four-eyes threshold: USD corrections above 100.00 need two approvers" 0 \
	config set corrections.four_eyes_above.USD 100

# An approval is the database login's, so each operator connects as a login
# of their own in clearing_approver. The embedded cluster stops when its
# last clearing process ends; holding a share of its users lock keeps it
# running, so that psql and the approvers' connections can reach it.
exec {cluster}>>"$home/embedded.users"
flock -s "$cluster"
# The command that starts the cluster must not pass the lock on to it.
"$clearing" --tenant "$tenant" corrections list >/dev/null {cluster}>&- || exit 1
psql=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -1)
socket="host=$home/pg port=5432 dbname=clearing sslmode=disable"
step "Two approver logins, created as README says" \
	"CREATE ROLE demo_alice LOGIN IN ROLE clearing_approver; CREATE ROLE demo_bob LOGIN IN ROLE clearing_approver"
"$psql" -q -v ON_ERROR_STOP=1 "$socket user=postgres" -c "DO \$\$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'demo_alice') THEN CREATE ROLE demo_alice LOGIN IN ROLE clearing_approver; END IF;
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'demo_bob') THEN CREATE ROLE demo_bob LOGIN IN ROLE clearing_approver; END IF;
END \$\$" || exit 1
alice=(--database-url "$socket user=demo_alice")
bob=(--database-url "$socket user=demo_bob")
run "Alice approves them: the two under 100.00 USD post once, with kind correction; the 125.00 USD one waits" 0 \
	"${alice[@]}" corrections approve $ids --operator "Alice" --reason "confirmed with the bank's statement"
waiting=$("$clearing" --tenant "$tenant" -o csv corrections list --status approved | awk -F, 'NR > 1 { print $1 }')
run "Alice's login again, under another spelling of her name: refused by the database, exit 1" 1 \
	"${alice[@]}" corrections approve $waiting --operator "alice " --reason "again"
run "The owner of the schema is never an approver: refused, exit 1" 1 \
	corrections approve $waiting --operator "Carol" --reason "owner"
run "Bob, a second login and a second person, approves: it posts" 0 \
	"${bob[@]}" corrections approve $waiting --operator "Bob" --reason "checked the bank's statement too"
run "Each decision with the login the database recorded" 0 corrections show $waiting
run "Approving again posts nothing more" 0 "${alice[@]}" corrections approve $ids --operator "Alice" --reason "again"
# Let the cluster stop with the demo's last command.
exec {cluster}>&-
run "Reconcile again: the corrected breaks close; what is left still needs a person" 3 \
	reconcile --source ach --from "$FROM" --to "$TO"
step "The same report as a self-contained HTML page for finance" "clearing report latest -o html > $dir/report.html"
"$clearing" --tenant "$tenant" report latest -o html > "$dir/report.html"
echo "wrote $(wc -c < "$dir/report.html") bytes; open it in a browser"
run "Balances by kind of posting: corrections show apart from clearing and returns" 0 balance --by-kind --account 'settlement:*'
run "Run history" 0 runs
echo
echo "demo done: tenant $tenant"
