#!/usr/bin/env bash
# Makes test/fixtures/upgrade-0.1/: the on-disk state (order ledger, import journals, inputs) that
# ordercli 0.1.0 as released (commit 54a0e9a) leaves behind, for a test that feeds it to newer code
# and checks that no order the old files record as created or in doubt is sent after the upgrade.
#
#   bash scripts/make-upgrade-fixtures.sh
#
# Steps: a git worktree of the old commit (npm install, npm run build) at $OLD; a sandbox of the old
# code on a free loopback port P (kept for every restart, with --data so that its orders survive
# them); then, with the old binary and ORDERCLI_CONFIG_DIR=$WORK/config:
#   a. orders import upgrade.ndjson --journal upgrade.journal.ndjson      (UPG-001..030 created)
#   b. orders import doubt.ndjson --journal doubt.journal.ndjson --concurrency 4 against the sandbox
#      restarted with --latency 2s, kill -9 once 3 requests have reached the sandbox (polled in its
#      --data journal) and none has been answered: the journal and the ledger hold `sending`
#      records without outcome. Then orders resolve --not-created (one in doubt that the sandbox never
#      received, when there is one) and --created <id>=<sandbox id> (one it received).
#   c. orders create --file one.json                                      (CRT-001, ledger only)
#   d. with a fresh ORDERCLI_CONFIG_DIR=$WORK/config-ci:
#      orders import journal-only.ndjson --journal journal-only.journal.ndjson (JNL-001..010);
#      only the journal is kept (a CI runner whose config folder is new each run).
# Then the files are copied to the fixture folder, the base URL http://127.0.0.1:P is replaced by
# http://127.0.0.1:4999 everywhere and the ledger's service folder is renamed accordingly (with the
# old code's own ledgerFolder(), bundled from the worktree), and manifest.json is written from the
# old code's own reading of the files (OrderJournal.inspect, OrderLedger.lookup).
# The kill -9 is timed by polling, so which DBT orders end up in doubt varies from run to run.
#
# Everything listens on and connects to 127.0.0.1 only. The worktree is removed at the end
# (KEEP_OLD=1 keeps it). The work folder is fixed because the old code records absolute paths
# (the ledger's `input` and `journal`, the journals' `input`): see the fixture's README.md.
set -euo pipefail

OLD_COMMIT=54a0e9a
PLACEHOLDER_URL=http://127.0.0.1:4999
REPO=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
OLD=${OLD:-/tmp/ordercli-old}
WORK=/tmp/ordercli-upgrade-0.1
FILES=$WORK/files
OUT=$REPO/test/fixtures/upgrade-0.1
OLDBIN=(node "$OLD/bin/ordercli.js")

# Nothing from the caller's environment may steer the old binary elsewhere.
unset ORDERCLI_BASE_URL ORDERCLI_TOKEN ORDERCLI_PROFILE ORDERCLI_AUTH_HEADER ORDERCLI_TIMEOUT \
  ORDERCLI_RETRIES ORDERCLI_DEBUG ORDERCLI_LOCK_WAIT GITHUB_ACTIONS XDG_CONFIG_HOME || true

log() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'make-upgrade-fixtures: %s\n' "$*" >&2; exit 1; }

# --- 1. the old code ------------------------------------------------------------------------------
log "old code: $OLD at $OLD_COMMIT"
if [ ! -e "$OLD/.git" ]; then
  git -C "$REPO" worktree add --detach "$OLD" "$OLD_COMMIT"
fi
[ "$(git -C "$OLD" rev-parse HEAD)" = "$(git -C "$REPO" rev-parse "$OLD_COMMIT^{commit}")" ] ||
  die "$OLD is not at $OLD_COMMIT"
# npm install, not npm ci: the lock file of that commit lacks biome's optional platform packages.
(cd "$OLD" && npm_config_cache=${npm_config_cache:-/tmp/npm-cache-old} npm install --no-audit --no-fund >/dev/null &&
  npm run --silent build)
[ "$("${OLDBIN[@]}" --version)" = 0.1.0 ] || die "the old binary is not 0.1.0"

rm -rf "$WORK"
mkdir -p "$FILES" "$WORK/config" "$WORK/config-ci" "$WORK/sandbox"

# The old code's own functions, bundled from its sources (neither is exported by dist/).
cat >"$WORK/old-api.ts" <<EOF
export { ledgerFolder, OrderLedger, shardOf, shardFileName } from '$OLD/src/import/ledger.ts';
export { OrderJournal } from '$OLD/src/import/journal.ts';
EOF
"$OLD/node_modules/.bin/esbuild" "$WORK/old-api.ts" --bundle --platform=node --format=esm \
  --target=node20 --log-level=warning --outfile="$WORK/old-api.mjs"

# --- inputs ---------------------------------------------------------------------------------------
log "inputs in $FILES"
node --input-type=module - "$FILES" <<'EOF'
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
const dir = process.argv[2];
const customers = ['Maison Rousseau', "Biocoop de l'Iroise", 'Épicerie Perrin', 'Primeur Fontaine',
  'Hôtel du Lac', 'Café des Arts', 'Boulangerie Martin', 'Fromagerie Dubois'];
const cities = [['01000', 'Bourg-en-Bresse'], ['29200', 'Brest'], ['05000', 'Gap'], ['74000', 'Annecy']];
function order(prefix, n) {
  const i = n - 1;
  const o = {
    externalId: `${prefix}-${String(n).padStart(3, '0')}`,
    externalReference: `PO-${prefix}-${String(n).padStart(4, '0')}`,
    contact: { internalReferenceId: 301 + (i % 8) },
    customer: { name: customers[i % 8] },
  };
  if (n % 3 === 0) {
    const [zipCode, city] = cities[i % 4];
    o.deliveryAddress = { recipient: customers[i % 8], street: `${n} rue de la République`, zipCode, city, country: 'FR' };
  }
  o.items = [{ internalReferenceId: 401 + (i % 16), orderedQuantity: 1 + (i % 12) }];
  if (n % 2 === 0) o.items.push({ internalReferenceId: 401 + ((i + 5) % 16), orderedQuantity: 6 });
  return o;
}
const ndjson = (prefix, count) =>
  Array.from({ length: count }, (_, i) => `${JSON.stringify(order(prefix, i + 1))}\n`).join('');
writeFileSync(join(dir, 'upgrade.ndjson'), ndjson('UPG', 30));
writeFileSync(join(dir, 'doubt.ndjson'), ndjson('DBT', 20));
writeFileSync(join(dir, 'journal-only.ndjson'), ndjson('JNL', 10));
writeFileSync(join(dir, 'one.json'), `${JSON.stringify(order('CRT', 1), null, 2)}\n`);
EOF

# --- the sandbox ----------------------------------------------------------------------------------
SANDBOX_PID=
PORT=0
cleanup() {
  if [ -n "${IMPORT_PID:-}" ]; then kill -9 "$IMPORT_PID" 2>/dev/null || true; fi
  if [ -n "$SANDBOX_PID" ]; then kill -INT "$SANDBOX_PID" 2>/dev/null || true; wait "$SANDBOX_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT

# start_sandbox <latency>: on $PORT (0 the first time: a free one, kept for the restarts).
start_sandbox() {
  local out=$WORK/sandbox-$RANDOM.log
  "${OLDBIN[@]}" sandbox --host 127.0.0.1 --port "$PORT" --latency "$1" --data "$WORK/sandbox" >"$out" 2>&1 &
  SANDBOX_PID=$!
  for _ in $(seq 200); do
    if grep -q '^Sandbox listening on http://127\.0\.0\.1:[0-9]*$' "$out"; then break; fi
    kill -0 "$SANDBOX_PID" 2>/dev/null || { cat "$out" >&2; die "the sandbox did not start"; }
    sleep 0.1
  done
  BASE_URL=$(sed -n 's/^Sandbox listening on \(http:\/\/127\.0\.0\.1:[0-9]*\)$/\1/p' "$out")
  [ -n "$BASE_URL" ] || die "no URL in the sandbox's start-up lines"
  PORT=${BASE_URL##*:}
  log "sandbox $BASE_URL (latency $1, pid $SANDBOX_PID)"
}
stop_sandbox() {
  kill -INT "$SANDBOX_PID"
  wait "$SANDBOX_PID" || true
  SANDBOX_PID=
}

export ORDERCLI_TOKEN=sandbox-full-token ORDERCLI_CONFIG_DIR=$WORK/config
cd "$FILES"

# --- a. a full import -----------------------------------------------------------------------------
start_sandbox 50ms
export ORDERCLI_BASE_URL=$BASE_URL
log "a. orders import upgrade.ndjson"
"${OLDBIN[@]}" orders import upgrade.ndjson --journal upgrade.journal.ndjson

# --- b. an import killed with requests in flight, then two resolutions ----------------------------
stop_sandbox
start_sandbox 2s
[ "$BASE_URL" = "$ORDERCLI_BASE_URL" ] || die "the sandbox came back on another URL"
log "b. orders import doubt.ndjson --concurrency 4, killed with kill -9"
"${OLDBIN[@]}" orders import doubt.ndjson --journal doubt.journal.ndjson --concurrency 4 \
  >"$WORK/doubt-import.log" 2>&1 &
IMPORT_PID=$!
received=0
for _ in $(seq 300); do
  received=$(grep -c '"externalId":"DBT-' "$WORK/sandbox/sandbox-journal.ndjson" || true)
  [ "$received" -ge 3 ] && break
  kill -0 "$IMPORT_PID" 2>/dev/null || die "the import ended before it was killed"
  sleep 0.05
done
[ "$received" -ge 3 ] || die "no request reached the sandbox in 15 s"
kill -9 "$IMPORT_PID"
wait "$IMPORT_PID" 2>/dev/null || true
IMPORT_PID=
grep -q '"event":"created","externalId":"DBT-' doubt.journal.ndjson &&
  log "note: some DBT orders were answered before the kill"
# The orders in doubt: `sending` in the journal with no outcome after it.
mapfile -t IN_DOUBT < <(node --input-type=module - "$WORK" "$FILES/doubt.journal.ndjson" "$BASE_URL" <<'EOF'
const [work, journal, baseUrl] = process.argv.slice(2);
const { OrderJournal } = await import(`${work}/old-api.mjs`);
const { states } = await OrderJournal.inspect(journal, baseUrl);
for (const [id, state] of states) if (state.event === 'sending') console.log(id);
EOF
)
[ "${#IN_DOUBT[@]}" -ge 3 ] || die "only ${#IN_DOUBT[@]} orders in doubt after the kill"
log "in doubt: ${IN_DOUBT[*]}"
# What the sandbox received (and so created): externalId -> its id.
sandbox_id() { grep -o "\"id\":[0-9]*,\"code\":\"[^\"]*\",\"status\":\"[a-z]*\",\"externalId\":\"$1\"" \
  "$WORK/sandbox/sandbox-journal.ndjson" | head -1 | sed 's/^"id":\([0-9]*\),.*/\1/' || true; }
NOT_CREATED= CREATED= CREATED_ID=
for id in "${IN_DOUBT[@]}"; do
  sid=$(sandbox_id "$id")
  if [ -z "$sid" ] && [ -z "$NOT_CREATED" ]; then NOT_CREATED=$id; fi
  if [ -n "$sid" ] && [ -z "$CREATED" ]; then CREATED=$id CREATED_ID=$sid; fi
done
[ -n "$CREATED" ] || die "none of the orders in doubt reached the sandbox"
if [ -z "$NOT_CREATED" ]; then
  # Every order in doubt reached the sandbox: resolve the last one as not created all the same.
  NOT_CREATED=${IN_DOUBT[${#IN_DOUBT[@]}-1]}
fi
log "b. orders resolve: $NOT_CREATED not created, $CREATED created (id $CREATED_ID)"
"${OLDBIN[@]}" orders resolve doubt.journal.ndjson --not-created "$NOT_CREATED"
"${OLDBIN[@]}" orders resolve doubt.journal.ndjson --created "$CREATED=$CREATED_ID"
stop_sandbox

# --- c. orders create -----------------------------------------------------------------------------
start_sandbox 50ms
log "c. orders create --file one.json"
"${OLDBIN[@]}" orders create --file one.json

# --- d. a journal whose ledger is gone -------------------------------------------------------------
log "d. orders import journal-only.ndjson with a fresh config folder"
ORDERCLI_CONFIG_DIR=$WORK/config-ci "${OLDBIN[@]}" orders import journal-only.ndjson \
  --journal journal-only.journal.ndjson
stop_sandbox
cd "$WORK"

# --- 4. the fixture -------------------------------------------------------------------------------
log "fixture: $OUT"
# README.md is written by hand (the rewrite procedure): it survives a regeneration.
if [ -e "$OUT/README.md" ]; then cp "$OUT/README.md" "$WORK/README.md"; fi
rm -rf "$OUT"
mkdir -p "$OUT"
cp -R "$WORK/config/ledger" "$OUT/ledger"
for f in upgrade doubt journal-only; do
  cp "$FILES/$f.ndjson" "$FILES/$f.journal.ndjson" "$OUT/"
done
cp "$FILES/one.json" "$OUT/"
cp "$WORK/sandbox/sandbox-journal.ndjson" "$WORK/sandbox-orders.ndjson"

node --input-type=module - "$WORK" "$OUT" "$BASE_URL" "$PLACEHOLDER_URL" "$OLD_COMMIT" <<'EOF'
import { existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
const [work, out, realUrl, placeholder, oldCommit] = process.argv.slice(2);
const { ledgerFolder, OrderLedger, OrderJournal, shardOf, shardFileName } = await import(`${work}/old-api.mjs`);

// 1. The URL, in every file: exact string, never followed by a digit (4999 must not match 49991).
const files = (dir) => readdirSync(dir).flatMap((name) => {
  const path = join(dir, name);
  return statSync(path).isDirectory() ? files(path) : [path];
});
const pattern = new RegExp(`${realUrl.replace(/[.:/]/g, '\\$&')}(?![0-9])`, 'g');
for (const path of files(out)) {
  const text = readFileSync(path, 'utf8');
  const changed = text.replace(pattern, placeholder);
  if (changed !== text) writeFileSync(path, changed);
}
// 2. The service folder's name, by the old code's own function.
const realFolder = basename(ledgerFolder('/', realUrl));
const placeholderFolder = basename(ledgerFolder('/', placeholder));
const services = readdirSync(join(out, 'ledger'));
if (services.length !== 1 || services[0] !== realFolder)
  throw new Error(`expected one ledger folder ${realFolder}, found ${services.join(', ')}`);
renameSync(join(out, 'ledger', realFolder), join(out, 'ledger', placeholderFolder));
const port = realUrl.split(':').pop();
for (const path of files(out))
  if (readFileSync(path, 'utf8').includes(`127.0.0.1:${port}`) || path.includes(`_${port}-`))
    throw new Error(`${path} still names port ${port}`);

// 3. The manifest, from the old code's reading of the fixture itself (so the rename is checked too).
const ledger = await OrderLedger.open(out, placeholder, { by: 'orders import' }, { readOnly: true });
if (ledger.folder !== join(out, 'ledger', placeholderFolder)) throw new Error(`ledger at ${ledger.folder}`);
const sandbox = new Map();
for (const line of readFileSync(join(work, 'sandbox-orders.ndjson'), 'utf8').split('\n')) {
  if (!line.startsWith('{')) continue;
  const r = JSON.parse(line);
  if (r.op === 'order') sandbox.set(r.record.externalId, { id: r.record.id, code: r.record.code });
}
const sources = [
  { input: 'upgrade.ndjson', journal: 'upgrade.journal.ndjson' },
  { input: 'doubt.ndjson', journal: 'doubt.journal.ndjson' },
  { input: 'journal-only.ndjson', journal: 'journal-only.journal.ndjson' },
  { input: 'one.json' },
];
const stateOfJournal = (s) => !s ? null
  : s.event === 'created' ? (s.resolved === 'created' ? 'resolved-created' : 'created')
  : s.event === 'failed' ? (s.resolved === 'not-created' ? 'resolved-not-created' : 'failed')
  : 'in-doubt';
const stateOfLedger = (e) => !e ? null
  : e.event === 'resolved' ? `resolved-${e.status}` : e.status;
const orders = {};
const summary = {};
for (const { input, journal } of sources) {
  const ids = input.endsWith('.json')
    ? [JSON.parse(readFileSync(join(out, input), 'utf8')).externalId]
    : readFileSync(join(out, input), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).externalId);
  const states = journal ? (await OrderJournal.inspect(join(out, journal), placeholder)).states : new Map();
  for (const externalId of ids) {
    const j = states.get(externalId);
    const l = await ledger.lookup(externalId);
    const shard = `${relative(out, ledger.folder)}/${shardFileName(shardOf(externalId))}`;
    const journalState = stateOfJournal(j);
    const ledgerState = stateOfLedger(l);
    if (journalState && ledgerState && journalState !== ledgerState)
      throw new Error(`${externalId}: journal ${journalState}, ledger ${ledgerState}`);
    const state = journalState ?? ledgerState ?? 'never-sent';
    const recordedIn = [];
    if (j) recordedIn.push(journal);
    if (l) recordedIn.push(shard);
    const atOldSandbox = sandbox.get(externalId);
    const entry = {
      state,
      // created, in doubt or resolved as created: the new code must never send it again.
      mustNotBeSent: ['created', 'in-doubt', 'resolved-created'].includes(state),
      input,
      recordedIn,
      journalState,
      ledgerState,
    };
    const id = j?.id ?? l?.id;
    if (id !== undefined) entry.id = id;
    const code = j?.code ?? l?.code;
    if (code !== undefined) entry.code = code;
    // Whether the old sandbox had really received (and created) it: the truth behind a doubt.
    entry.receivedByOldSandbox = Boolean(atOldSandbox);
    orders[externalId] = entry;
    summary[state] = (summary[state] ?? 0) + 1;
  }
}
const walLeft = existsSync(join(ledger.folder, 'wal')) ? readdirSync(join(ledger.folder, 'wal')) : [];
const manifest = {
  description: 'On-disk state left by ordercli 0.1.0: what each externalId is, and which files record it. See README.md.',
  madeBy: 'scripts/make-upgrade-fixtures.sh',
  ordercliVersion: '0.1.0',
  commit: oldCommit,
  baseUrl: placeholder,
  ledgerFolder: relative(out, ledger.folder),
  recordedPathPrefix: `${work}/files`,
  configFolderOfTheLedger: '.',
  files: {
    'upgrade.ndjson': 'a. input of 30 orders UPG-001..030',
    'upgrade.journal.ndjson': 'a. journal of `orders import upgrade.ndjson --journal upgrade.journal.ndjson`, run to the end',
    'doubt.ndjson': 'b. input of 20 orders DBT-001..020',
    'doubt.journal.ndjson':
      'b. journal of `orders import doubt.ndjson --journal doubt.journal.ndjson --concurrency 4`, killed with kill -9 (sandbox latency 2s), then two `orders resolve` runs',
    'one.json': 'c. the order CRT-001 of `orders create --file one.json` (no journal: in the ledger only)',
    'journal-only.ndjson': 'd. input of 10 orders JNL-001..010',
    'journal-only.journal.ndjson':
      'd. journal of `orders import journal-only.ndjson --journal journal-only.journal.ndjson` run with a fresh config folder whose ledger was thrown away: these orders are in no ledger here',
    [relative(out, ledger.folder)]: `the order ledger of the config folder used by a, b and c: service.json and one shard file per shard written; ${
      walLeft.length === 0
        ? "wal/ is empty (git keeps no empty folder): the killed import's log was copied into the shards and removed by the next command that opened the ledger (orders resolve)"
        : `wal/ holds ${walLeft.join(', ')}`
    }`,
  },
  states: {
    created: 'the service answered 2xx (journal `created`, ledger `created`)',
    'in-doubt': 'sent, no answer recorded: `sending` without outcome (the import was killed with kill -9)',
    'resolved-created': 'in doubt, then `orders resolve --created <id>=<sandbox id>`',
    'resolved-not-created': 'in doubt, then `orders resolve --not-created <id>`: may be sent again',
    'never-sent': 'in the input, but the killed import never journaled it: may be sent',
  },
  summary: {
    ...summary,
    total: Object.keys(orders).length,
    mustNotBeSent: Object.values(orders).filter((o) => o.mustNotBeSent).length,
  },
  orders,
};
writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(JSON.stringify(manifest.summary));
EOF

# manifest.json as the repo's biome check wants it. The files the old code wrote or read stay
# byte for byte as they were (biome would want spaces in the ledger's service.json).
(cd "$REPO" && "$OLD/node_modules/.bin/biome" format --stdin-file-path=test/fixtures/upgrade-0.1/manifest.json \
  <"$OUT/manifest.json" >"$WORK/manifest.json") && cp "$WORK/manifest.json" "$OUT/manifest.json"

if [ -e "$WORK/README.md" ]; then
  cp "$WORK/README.md" "$OUT/README.md"
else
  git -C "$REPO" checkout -- test/fixtures/upgrade-0.1/README.md 2>/dev/null ||
    echo "note: $OUT/README.md (the rewrite procedure) is missing" >&2
fi
du -sh "$OUT" >&2

# --- 6. the old code goes -------------------------------------------------------------------------
if [ -z "${KEEP_OLD:-}" ]; then
  git -C "$REPO" worktree remove --force "$OLD"
fi
