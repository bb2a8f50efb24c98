# Container worker (both lanes): bundles functions/worker-process.ts into one file and runs it with plain node.
# Build from the repository root: docker build -f infra/worker.Dockerfile .

# The full image has the C compiler that `npm ci` (postinstall) uses to build the command supervisor; both stages
# are bookworm, so the supervisor links against the same glibc it runs with.
FROM node:22-bookworm AS build
WORKDIR /app
# All dependencies: esbuild is a devDependency, and the sources are TypeScript.
COPY . .
RUN npm ci --no-audit --no-fund && test -x packages/runner/bin/jobs-supervise
# One ESM file with every workspace package and dependency inlined; the banner gives bundled
# CommonJS dependencies (pg, ioredis) the `require` that ESM output lacks.
RUN npx esbuild functions/worker-process.ts \
      --bundle --platform=node --target=node22 --format=esm \
      --banner:js="import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" \
      --outfile=dist/worker.mjs

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/dist/worker.mjs ./worker.mjs
# The worker finds the supervisor beside its bundle.
COPY --from=build /app/packages/runner/bin/jobs-supervise ./jobs-supervise
# Commands run as this user, never as the worker: it cannot read the worker's environment or memory through /proc,
# nor signal it. The worker itself runs as root only so that it can switch to this user (README, "Trust boundary").
RUN useradd --system --uid 10001 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin jobrunner
ENV JOB_USER=jobrunner
USER root
# Exec form, so SIGTERM from ECS reaches node (ECS also runs an init process) and the drain starts.
CMD ["node", "worker.mjs"]
