#!/usr/bin/env bash
# npm test: every unit and integration test, then the cron tests again under two other host time zones
# (the process TZ must not change any schedule).
set -euo pipefail
cd "$(dirname "$0")/.."
npx vitest run --config test/vitest.config.ts "$@"
if [ "$#" -eq 0 ]; then
  for tz in America/New_York Australia/Sydney; do
    TZ=$tz npx vitest run --config test/vitest.config.ts packages/core/src/cron packages/core/src/schedule
  done
fi
