// Shared helpers of the node-postgres smoke tests (*.test.js beside this file).
//
// The suite talks to whatever server the standard libpq environment names:
// PGHOST (default 127.0.0.1), PGPORT (default 5432), PGUSER (default
// postgres), PGDATABASE (default postgres). crates/tusk/tests/drivers_py_node.rs
// points it at a freshly spawned Tusk; pointing it at PostgreSQL 15 shows
// that every expectation is PostgreSQL's own answer:
//
//     cd tests/drivers/node && npm ci && PGHOST=/tmp PGPORT=54341 node --test
//
// Tables are prefixed `js_` so that the Python suite can share the server.
'use strict';

// Dates and timestamps without a zone are parsed in the process's local time
// zone by node-postgres: pin it so expectations do not depend on the machine.
process.env.TZ = 'UTC';

const pg = require('pg');

function config(extra = {}) {
  return {
    host: process.env.PGHOST || '127.0.0.1',
    port: Number(process.env.PGPORT || 5432),
    user: process.env.PGUSER || 'postgres',
    database: process.env.PGDATABASE || 'postgres',
    connectionTimeoutMillis: 10000,
    ...extra,
  };
}

/** A connected pg.Client; the caller ends it. */
async function connect(extra) {
  const client = new pg.Client(config(extra));
  await client.connect();
  return client;
}

/** Drops table `name` if a previous run left it, and creates it anew. */
async function recreate(client, name, columns) {
  await client.query(`DROP TABLE IF EXISTS ${name}`);
  await client.query(`CREATE TABLE ${name} (${columns})`);
}

/** Runs `fn` and returns the error it rejects with (fails if it resolves). */
async function errorOf(fn) {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error, but the query succeeded');
}

module.exports = { pg, config, connect, recreate, errorOf };
