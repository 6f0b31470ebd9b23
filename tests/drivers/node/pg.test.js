// node-postgres (pg) smoke tests: what an application does with the driver.
//
// Connect, DDL, parameterized INSERT/SELECT/UPDATE/DELETE, transactions with
// commit, rollback and savepoints, named prepared statements reused, NULLs,
// a connection pool, and errors that carry PostgreSQL's SQLSTATE. Type round
// trips are in types.test.js. Every expectation is PostgreSQL 15's answer.
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { pg, config, connect, recreate, errorOf } = require('./helpers');

let client;
before(async () => {
  client = await connect();
});
after(async () => {
  await client.end();
});

test('connect and server parameters', async () => {
  // The ParameterStatus messages of the startup.
  const fresh = new pg.Client(config());
  const status = {};
  fresh.connection.on('parameterStatus', (msg) => {
    status[msg.parameterName] = msg.parameterValue;
  });
  await fresh.connect();
  await fresh.end();
  assert.match(status.server_version, /^15/);
  assert.equal(status.server_encoding, 'UTF8');
  assert.equal(status.client_encoding, 'UTF8');
  assert.equal(status.standard_conforming_strings, 'on');
  assert.equal(status.integer_datetimes, 'on');

  const { rows } = await client.query('SHOW server_version_num');
  assert.ok(Number(rows[0].server_version_num) >= 150000 && Number(rows[0].server_version_num) < 160000);
  const res = await client.query('SELECT 1 + 1 AS two, current_user AS who');
  assert.deepEqual(res.rows, [{ two: 2, who: config().user }]);
  assert.equal(res.command, 'SELECT');
  assert.equal(res.rowCount, 1);
  assert.deepEqual(res.fields.map((f) => [f.name, f.dataTypeID]), [['two', 23], ['who', 19]]);
});

test('DDL and CRUD with parameters', async () => {
  await recreate(client, 'js_items', 'id integer PRIMARY KEY, name text NOT NULL, qty integer DEFAULT 0');
  let res = await client.query('INSERT INTO js_items (id, name, qty) VALUES ($1, $2, $3)', [1, 'apple', 3]);
  assert.equal(res.command, 'INSERT');
  assert.equal(res.rowCount, 1);
  res = await client.query('INSERT INTO js_items (id, name, qty) VALUES ($1, $2, $3), ($4, $5, $6), ($7, $8, $9)',
    [2, 'pear', 5, 3, 'plum', 7, 4, 'fig', 0]);
  assert.equal(res.rowCount, 3);
  res = await client.query('INSERT INTO js_items (id, name) VALUES ($1, $2) RETURNING id, qty', [5, 'kiwi']);
  assert.deepEqual(res.rows, [{ id: 5, qty: 0 }]);

  res = await client.query('SELECT id, name, qty FROM js_items WHERE qty >= $1 ORDER BY id', [3]);
  assert.deepEqual(res.rows, [
    { id: 1, name: 'apple', qty: 3 },
    { id: 2, name: 'pear', qty: 5 },
    { id: 3, name: 'plum', qty: 7 },
  ]);
  res = await client.query({ text: 'SELECT id, name FROM js_items WHERE id < $1 ORDER BY id', values: [3], rowMode: 'array' });
  assert.deepEqual(res.rows, [[1, 'apple'], [2, 'pear']]);

  res = await client.query('UPDATE js_items SET qty = qty + $1 WHERE name LIKE $2', [10, 'p%']);
  assert.equal(res.command, 'UPDATE');
  assert.equal(res.rowCount, 2);
  res = await client.query('DELETE FROM js_items WHERE id = ANY($1)', [[4, 5]]);
  assert.equal(res.command, 'DELETE');
  assert.equal(res.rowCount, 2);
  res = await client.query('SELECT id, qty FROM js_items ORDER BY id');
  assert.deepEqual(res.rows, [{ id: 1, qty: 3 }, { id: 2, qty: 15 }, { id: 3, qty: 17 }]);

  // A quote in a parameter is data, not SQL.
  await client.query('INSERT INTO js_items (id, name) VALUES ($1, $2)', [6, "O'Reilly; DROP TABLE js_items"]);
  res = await client.query('SELECT name FROM js_items WHERE id = 6');
  assert.equal(res.rows[0].name, "O'Reilly; DROP TABLE js_items");

  await client.query('ALTER TABLE js_items ADD COLUMN note text');
  await client.query('DROP TABLE js_items');
});

test('simple query protocol with several statements', async () => {
  // Without parameters node-postgres uses the simple protocol; several
  // statements answer with one result each.
  const results = await client.query('SELECT 1 AS a; SELECT 2 AS b, 3 AS c');
  assert.deepEqual(results.map((r) => r.rows), [[{ a: 1 }], [{ b: 2, c: 3 }]]);
});

test('transactions commit and roll back', async () => {
  await recreate(client, 'js_tx', 'id integer PRIMARY KEY, v text');
  await client.query('BEGIN');
  await client.query('INSERT INTO js_tx VALUES ($1, $2)', [1, 'kept']);
  await client.query('COMMIT');

  await client.query('BEGIN');
  await client.query('INSERT INTO js_tx VALUES ($1, $2)', [2, 'dropped']);
  await client.query('ROLLBACK');

  await client.query('BEGIN');
  await client.query("INSERT INTO js_tx VALUES (3, 'outer')");
  await client.query('SAVEPOINT s1');
  await client.query("INSERT INTO js_tx VALUES (4, 'inner')");
  await client.query('ROLLBACK TO SAVEPOINT s1');
  await client.query('RELEASE SAVEPOINT s1');
  await client.query('COMMIT');
  let res = await client.query('SELECT id FROM js_tx ORDER BY id');
  assert.deepEqual(res.rows.map((r) => r.id), [1, 3]);

  // A failed statement aborts the transaction until ROLLBACK (25P02).
  await client.query('BEGIN');
  const dup = await errorOf(() => client.query('INSERT INTO js_tx VALUES (1, $1)', ['duplicate']));
  assert.equal(dup.code, '23505');
  const aborted = await errorOf(() => client.query('SELECT 1'));
  assert.equal(aborted.code, '25P02');
  assert.equal(aborted.message, 'current transaction is aborted, commands ignored until end of transaction block');
  // COMMIT of a failed transaction rolls back.
  res = await client.query('COMMIT');
  assert.equal(res.command, 'ROLLBACK');

  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  res = await client.query('SHOW transaction_isolation');
  assert.equal(res.rows[0].transaction_isolation, 'repeatable read');
  await client.query('DELETE FROM js_tx');
  await client.query('ROLLBACK');
  res = await client.query('SELECT count(*) FROM js_tx');
  assert.equal(res.rows[0].count, '2'); // bigint comes back as a string
  await client.query('DROP TABLE js_tx');
});

test('named prepared statements are reused', async () => {
  await recreate(client, 'js_prep', 'id integer PRIMARY KEY, sq bigint');
  // A named query is parsed once per connection, then only bound and executed.
  for (let i = 1; i <= 10; i++) {
    await client.query({ name: 'js_insert', text: 'INSERT INTO js_prep VALUES ($1, $2)', values: [i, i * i] });
  }
  for (const i of [3, 7, 10]) {
    const res = await client.query({ name: 'js_get', text: 'SELECT sq FROM js_prep WHERE id = $1', values: [i] });
    assert.deepEqual(res.rows, [{ sq: String(i * i) }]);
  }
  // Unnamed extended-protocol statements too.
  const res = await client.query('SELECT count(*)::int AS n FROM js_prep WHERE sq > $1', [20]);
  assert.deepEqual(res.rows, [{ n: 6 }]);

  // SQL-level PREPARE / EXECUTE.
  await client.query('PREPARE js_sql_get (int) AS SELECT sq FROM js_prep WHERE id = $1');
  assert.deepEqual((await client.query('EXECUTE js_sql_get (4)')).rows, [{ sq: '16' }]);
  await client.query('DEALLOCATE js_sql_get');
  const err = await errorOf(() => client.query('EXECUTE js_sql_get (4)'));
  assert.equal(err.code, '26000');
  await client.query('DROP TABLE js_prep');
});

test('NULLs', async () => {
  await recreate(client, 'js_nulls', 'id integer PRIMARY KEY, t text, n numeric, b boolean, ts timestamp');
  await client.query('INSERT INTO js_nulls VALUES ($1, $2, $3, $4, $5)', [1, null, undefined, null, null]);
  await client.query('INSERT INTO js_nulls (id) VALUES (2)');
  for (const binary of [false, true]) {
    const res = await client.query({ text: 'SELECT t, n, b, ts FROM js_nulls ORDER BY id', binary, queryMode: 'extended' });
    assert.deepEqual(res.rows, [{ t: null, n: null, b: null, ts: null }, { t: null, n: null, b: null, ts: null }]);
  }
  let res = await client.query('SELECT count(*)::int AS n FROM js_nulls WHERE t = $1', [null]);
  assert.equal(res.rows[0].n, 0);
  res = await client.query("SELECT $1::int IS NULL AS isnull, coalesce($2, 'dflt') AS c, ARRAY[1, NULL, 3] AS a", [null, null]);
  assert.deepEqual(res.rows, [{ isnull: true, c: 'dflt', a: [1, null, 3] }]);
  const err = await errorOf(() => client.query('INSERT INTO js_nulls (id) VALUES ($1)', [null]));
  assert.equal(err.code, '23502');
  assert.equal(err.column, 'id');
  await client.query('DROP TABLE js_nulls');
});

test('errors carry SQLSTATE and fields', async () => {
  await recreate(client, 'js_err', 'id integer PRIMARY KEY, v integer CHECK (v > 0), s varchar(3)');
  await client.query('INSERT INTO js_err VALUES (1, 1)');

  let err = await errorOf(() => client.query('INSERT INTO js_err VALUES ($1, $2)', [1, 2]));
  assert.ok(err instanceof pg.DatabaseError);
  assert.equal(err.code, '23505');
  assert.equal(err.severity, 'ERROR');
  assert.equal(err.message, 'duplicate key value violates unique constraint "js_err_pkey"');
  assert.equal(err.detail, 'Key (id)=(1) already exists.');
  assert.equal(err.constraint, 'js_err_pkey');
  assert.equal(err.table, 'js_err');
  assert.equal(err.schema, 'public');

  err = await errorOf(() => client.query('INSERT INTO js_err VALUES (2, -1)'));
  assert.equal(err.code, '23514');
  assert.equal(err.constraint, 'js_err_v_check');

  err = await errorOf(() => client.query('SELECT 1 / $1::int', [0]));
  assert.equal(err.code, '22012');
  assert.equal(err.message, 'division by zero');

  err = await errorOf(() => client.query('SELECT * FROM js_no_such_table'));
  assert.equal(err.code, '42P01');
  assert.equal(err.message, 'relation "js_no_such_table" does not exist');
  assert.equal(err.position, '15');

  err = await errorOf(() => client.query('SELECT nope FROM js_err'));
  assert.equal(err.code, '42703');
  err = await errorOf(() => client.query('SELEC 1'));
  assert.equal(err.code, '42601');
  err = await errorOf(() => client.query("SELECT 'abc'::integer"));
  assert.equal(err.code, '22P02');
  assert.equal(err.message, 'invalid input syntax for type integer: "abc"');
  err = await errorOf(() => client.query('SELECT $1::smallint', [40000]));
  assert.equal(err.code, '22003');
  err = await errorOf(() => client.query('SELECT js_no_such_function(1)'));
  assert.equal(err.code, '42883');
  err = await errorOf(() => client.query('INSERT INTO js_err (id, v, s) VALUES (3, 3, $1)', ['abcdef']));
  assert.equal(err.code, '22001');
  assert.equal(err.message, 'value too long for type character varying(3)');
  // A bad parameter for a prepared statement fails at Bind.
  err = await errorOf(() => client.query('SELECT $1::int', ['x']));
  assert.equal(err.code, '22P02');

  // The connection is still usable.
  const res = await client.query('SELECT v FROM js_err');
  assert.deepEqual(res.rows, [{ v: 1 }]);
  await client.query('DROP TABLE js_err');
});

test('a pool runs queries on several connections', async () => {
  const pool = new pg.Pool(config({ max: 4 }));
  try {
    const results = await Promise.all(
      [1, 2, 3, 4, 5, 6, 7, 8].map((i) => pool.query('SELECT $1::int * 2 AS d, pg_backend_pid() AS pid', [i])),
    );
    assert.deepEqual(results.map((r) => r.rows[0].d), [2, 4, 6, 8, 10, 12, 14, 16]);
    const pooled = await pool.connect();
    try {
      await pooled.query('BEGIN');
      assert.equal((await pooled.query('SELECT 42 AS x')).rows[0].x, 42);
      await pooled.query('COMMIT');
    } finally {
      pooled.release();
    }
  } finally {
    await pool.end();
  }
});

test('LISTEN/NOTIFY: notification events of an idle listener', async () => {
  const listener = await connect();
  const sender = await connect();
  try {
    const received = [];
    let wake = null;
    listener.on('notification', (msg) => {
      received.push(msg);
      if (wake) wake();
    });
    // Resolves once `n` notifications have arrived (fails after 30 s).
    const waitFor = (n) => new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${received.length} of ${n} notifications`)), 30000);
      wake = () => {
        if (received.length >= n) {
          clearTimeout(timer);
          resolve();
        }
      };
      wake();
    });
    await listener.query('LISTEN js_channel');
    const senderPid = (await sender.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    await sender.query('BEGIN');
    await sender.query("NOTIFY js_channel, 'one'");
    await sender.query("NOTIFY js_channel, 'one'");
    await sender.query('SELECT pg_notify($1, $2)', ['js_channel', 'two']);
    await sender.query('COMMIT');
    await sender.query("BEGIN; NOTIFY js_channel, 'rolled back'; ROLLBACK");
    await sender.query("NOTIFY js_channel, 'three'");
    await waitFor(3);
    assert.deepEqual(received.map((m) => [m.channel, m.payload, m.processId]), [
      ['js_channel', 'one', senderPid],
      ['js_channel', 'two', senderPid],
      ['js_channel', 'three', senderPid],
    ]);
    await listener.query('UNLISTEN js_channel');
    const { rows } = await listener.query('SELECT pg_listening_channels() AS c');
    assert.deepEqual(rows, []);
  } finally {
    await listener.end();
    await sender.end();
  }
});
