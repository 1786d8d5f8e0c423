#!/usr/bin/env bash
# Installs (from Debian's packages) and starts the servers the store tests
# run against: PostgreSQL and Redis on loopback; installs Chromium for the
# viewer's browser tests. Prints the URLs and paths to export.
# Idempotent: a server already answering is left as it is.
set -euo pipefail

need=()
command -v pg_ctlcluster >/dev/null 2>&1 && ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
# Chromium for the viewer's browser tests (playwright-core drives it; never `npx playwright install`).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ "${#need[@]}" -gt 0 ]; then
  echo "== apt-get install ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2 || true
  apt-get install -y -q "${need[@]}" >&2
fi

# PostgreSQL: the Debian cluster, a role and a database for the tests.
version="$(ls /usr/lib/postgresql | sort -V | tail -1)"
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -q "^$version main$"; then
  pg_createcluster "$version" main >&2
fi
pg_ctlcluster "$version" main start >&2 2>&1 || true
for _ in $(seq 50); do
  su postgres -c "psql -qAt -c 'select 1'" >/dev/null 2>&1 && break
  sleep 0.2
done
su postgres -c "psql -qAt -c \"select 1 from pg_roles where rolname='eap'\"" | grep -q 1 ||
  su postgres -c "psql -q -c \"create role eap login superuser password 'eap'\"" >&2
su postgres -c "psql -qAt -c \"select 1 from pg_database where datname='eap_test'\"" | grep -q 1 ||
  su postgres -c "psql -q -c 'create database eap_test owner eap'" >&2

# Redis: no persistence, loopback only.
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no >&2
  for _ in $(seq 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.1; done
fi

echo "export EAP_TEST_DATABASE_URL=postgres://eap:eap@127.0.0.1:5432/eap_test"
echo "export EAP_TEST_REDIS_URL=redis://127.0.0.1:6379"
echo "export EAP_TEST_CHROMIUM=$(command -v chromium)"
