// Preloaded into a process under test (`node --import ./test/bench/lib/instrument.mjs ...`): times every PostgreSQL
// statement (per client: network + server; per pool: also the wait for a connection) and every Redis command (Lua
// scripts by name), and writes the totals as JSON to $BENCH_INSTRUMENT_OUT when the process exits. Engine code is
// untouched: this patches pg.Client, pg.Pool and ioredis prototypes.
// SIGUSR2 (first) resets the totals and starts a V8 CPU profile; SIGUSR2 (second) stops it and writes
// $BENCH_INSTRUMENT_OUT (timings) and $BENCH_INSTRUMENT_OUT.cpuprofile, then prints "instrument: written" on stderr.
// BENCH_INSTRUMENT_PROFILE=0 counts and times without the V8 profile (whose sampling would inflate the CPU figures).
// Redis round trips are counted apart from commands: a pipeline's commands share one.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const require = createRequire(`${process.cwd()}/package.json`);
const pg = require('pg');
const { Redis } = require('ioredis');
let stats = { pg: {}, pool: {}, redis: {}, redisRoundTrips: 0 };
const PROFILE = process.env.BENCH_INSTRUMENT_PROFILE !== '0';
const now = () => performance.now();
// With BENCH_MARKS=1: wall-clock instants (ms, sub-ms precision) at which each execution id came back from the claim
// script and from the read of claimed rows, for a per-stage latency breakdown.
const MARKS = process.env.BENCH_MARKS === '1';
let marks = { claimed: {}, loaded: {} };
const wall = () => performance.timeOrigin + performance.now();

function add(table, key, ms) {
  const s = (table[key] ??= { n: 0, ms: 0, max: 0 });
  s.n++;
  s.ms += ms;
  if (ms > s.max) s.max = ms;
}

const keys = new Map();
function sqlKey(config) {
  const text = typeof config === 'string' ? config : (config?.text ?? '');
  let key = keys.get(text);
  if (key === undefined) {
    key = text.replace(/\s+/g, ' ').trim().slice(0, 90);
    if (keys.size < 1000) keys.set(text, key);
  }
  return key;
}

for (const [proto, table] of [
  [pg.Client.prototype, 'pg'],
  [pg.Pool.prototype, 'pool'],
]) {
  const original = proto.query;
  proto.query = function (config, values, callback) {
    const t = now();
    // pg.Pool calls client.query with a callback: time that one through the callback.
    const cbIndex = typeof callback === 'function' ? 2 : typeof values === 'function' ? 1 : -1;
    if (cbIndex >= 0) {
      const key = sqlKey(config);
      const cb = cbIndex === 2 ? callback : values;
      const timed = function (error, ...rest) {
        add(stats[table], error ? `ERROR ${key}` : key, now() - t);
        return cb.call(this, error, ...rest);
      };
      return cbIndex === 2 ? original.call(this, config, values, timed) : original.call(this, config, timed);
    }
    const result = original.call(this, config, values, callback);
    if (result && typeof result.then === 'function') {
      const key = sqlKey(config);
      result.then(
        (res) => {
          add(stats[table], key, now() - t);
          if (MARKS && table === 'pool' && key.startsWith('SELECT id, job_id, attempt, coalesce(root_id, id)')) {
            const at = wall();
            for (const row of res.rows) marks.loaded[row.id] ??= at;
          }
        },
        () => add(stats[table], `ERROR ${key}`, now() - t),
      );
    }
    return result;
  };
}

const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (command, stream, node) {
  const t = now();
  let name = command.name;
  if (name === 'evalsha' || name === 'eval') {
    const sha = String(command.args[0]);
    for (const [scriptName, script] of Object.entries(this.scriptsSet ?? {})) {
      if (script.sha === sha || script.lua === sha) name = `lua:${scriptName}`;
    }
  }
  if (!stream?.isPipeline) stats.redisRoundTrips++;
  const result = sendCommand.call(this, command, stream, node);
  command.promise?.then(
    (reply) => {
      add(stats.redis, name, now() - t);
      if (MARKS && name === 'lua:claim' && Array.isArray(reply)) {
        const at = wall();
        for (let i = 1; i < reply.length; i += 2) marks.claimed[String(reply[i])] ??= at;
      }
    },
    () => add(stats.redis, `ERROR ${name}`, now() - t),
  );
  return result;
};

const Pipeline = require('ioredis/built/Pipeline').default;
const exec = Pipeline.prototype.exec;
Pipeline.prototype.exec = function (...args) {
  stats.redisRoundTrips++;
  return exec.apply(this, args);
};

const out = process.env.BENCH_INSTRUMENT_OUT;
let session = null;
const loop = monitorEventLoopDelay({ resolution: 5 });
process.on('SIGUSR2', () => {
  if (!session) {
    stats = { pg: {}, pool: {}, redis: {}, redisRoundTrips: 0 };
    marks = { claimed: {}, loaded: {} };
    loop.enable();
    loop.reset();
    if (!PROFILE) {
      session = 'counting';
      return;
    }
    session = new Session();
    session.connect();
    session.post('Profiler.enable', () =>
      session.post('Profiler.setSamplingInterval', { interval: 250 }, () => session.post('Profiler.start')),
    );
    return;
  }
  loop.disable();
  const ms = (ns) => ns / 1e6;
  stats.eventLoopDelay = {
    p50: ms(loop.percentile(50)),
    p99: ms(loop.percentile(99)),
    max: ms(loop.max),
    mean: ms(loop.mean),
  };
  if (MARKS) stats.marks = marks;
  const timings = JSON.stringify(stats);
  if (!PROFILE) {
    if (out) writeFileSync(out, timings);
    session = null;
    process.stderr.write('instrument: written\n');
    return;
  }
  session.post('Profiler.stop', (error, result) => {
    if (out) {
      writeFileSync(out, timings);
      if (!error) writeFileSync(`${out}.cpuprofile`, JSON.stringify(result.profile));
    }
    session.disconnect();
    process.stderr.write('instrument: written\n');
  });
});
