# Container worker (both lanes): bundles functions/worker-process.ts into one file and runs it with plain node.
# Build from the repository root: docker build -f infra/worker.Dockerfile .

FROM node:22-slim AS build
WORKDIR /app
# All dependencies: esbuild is a devDependency, and the sources are TypeScript.
COPY . .
RUN npm ci --no-audit --no-fund
# One ESM file with every workspace package and dependency inlined; the banner gives bundled
# CommonJS dependencies (pg, ioredis) the `require` that ESM output lacks.
RUN npx esbuild functions/worker-process.ts \
      --bundle --platform=node --target=node22 --format=esm \
      --banner:js="import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" \
      --outfile=dist/worker.mjs

FROM node:22-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/dist/worker.mjs ./worker.mjs
USER node
# Exec form, so SIGTERM from ECS reaches node (ECS also runs an init process) and the drain starts.
CMD ["node", "worker.mjs"]
