// node-postgres (pg) type round trips.
//
// For every type covered, a JavaScript value goes to the server as a
// parameter (node-postgres sends parameters as text, Buffers as binary) and
// comes back in text format, node-postgres's own format: once parsed by its
// default type parsers, once unparsed (the server's output function, byte
// for byte); the server must also read its own output back. A table holding
// all of them is read back the same ways. Binary results are covered by the
// Python suite: node-postgres decodes every DataRow field as UTF-8 before
// its binary parsers see it, so its binary mode only survives values whose
// bytes are all ASCII, which the last tests use. Every expectation is
// PostgreSQL 15's answer (see helpers.js to run against it).
'use strict';

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { connect, recreate } = require('./helpers');

let client;
before(async () => {
  client = await connect();
  // timestamptz values print in the session's zone.
  await client.query("SET TimeZone TO 'Europe/Paris'");
});
after(async () => {
  await client.end();
});

const JSON_DOC = { b: [1, 2.5, null, true], a: 'x\u00e9', nested: { k: 'v' } };
const BYTES = Buffer.from([0x00, 0x01, 0xfe, 0xff, 0x27, 0x5c]);

// [name, SQL type, parameter sent, value parsed from text (null: not checked), raw text]
const CASES = [
  ['bool_true', 'boolean', true, true, 't'],
  ['bool_false', 'boolean', false, false, 'f'],
  ['int2', 'smallint', -32768, -32768, '-32768'],
  ['int4', 'integer', 2147483647, 2147483647, '2147483647'],
  ['int8', 'bigint', '-9223372036854775808', '-9223372036854775808', '-9223372036854775808'],
  ['float4', 'real', -0.15625, -0.15625, '-0.15625'],
  ['float4_exp', 'real', 16777216, 16777216, '1.6777216e+07'],
  ['float8', 'double precision', 0.1, 0.1, '0.1'],
  ['float8_exp', 'double precision', 2.5e-300, 2.5e-300, '2.5e-300'],
  ['float8_inf', 'double precision', Infinity, Infinity, 'Infinity'],
  ['float8_nan', 'double precision', NaN, NaN, 'NaN'],
  ['numeric_big', 'numeric', '12345678901234567890.123456789012345678901234567890',
    '12345678901234567890.123456789012345678901234567890',
    '12345678901234567890.123456789012345678901234567890'],
  ['numeric_tiny', 'numeric', '-0.000000000000000000001', '-0.000000000000000000001', '-0.000000000000000000001'],
  ['numeric_int', 'numeric', '100000000000000000000000000000000000000', '100000000000000000000000000000000000000',
    '100000000000000000000000000000000000000'],
  ['numeric_scale', 'numeric(10,4)', '3.14', '3.1400', '3.1400'],
  ['numeric_zero', 'numeric', '0.00', '0.00', '0.00'],
  ['numeric_nan', 'numeric', 'NaN', 'NaN', 'NaN'],
  ['text', 'text', "h\u00e9llo \u2713 'single' \"double\" back\\slash\ttab", "h\u00e9llo \u2713 'single' \"double\" back\\slash\ttab",
    "h\u00e9llo \u2713 'single' \"double\" back\\slash\ttab"],
  ['text_empty', 'text', '', '', ''],
  ['varchar', 'varchar(10)', 'abc', 'abc', 'abc'],
  ['char', 'char(5)', 'ab', 'ab   ', 'ab   '],
  ['bytea', 'bytea', BYTES, BYTES, '\\x0001feff275c'],
  ['bytea_empty', 'bytea', Buffer.alloc(0), Buffer.alloc(0), '\\x'],
  ['date', 'date', '2024-02-29', new Date(Date.UTC(2024, 1, 29)), '2024-02-29'],
  ['date_old', 'date', '0001-01-01', null, '0001-01-01'],
  ['time', 'time', '13:04:05.123456', '13:04:05.123456', '13:04:05.123456'],
  ['timestamp', 'timestamp', '2024-03-05 13:04:05.123456', new Date(Date.UTC(2024, 2, 5, 13, 4, 5, 123)),
    '2024-03-05 13:04:05.123456'],
  ['timestamptz', 'timestamp with time zone', new Date(Date.UTC(2024, 2, 5, 12, 4, 5, 123)),
    new Date(Date.UTC(2024, 2, 5, 12, 4, 5, 123)), '2024-03-05 13:04:05.123+01'],
  ['interval', 'interval', '3 days 04:05:06.000007', { days: 3, hours: 4, minutes: 5, seconds: 6, milliseconds: 0.007 }, '3 days 04:05:06.000007'],
  ['interval_months', 'interval', '1 year 2 mons -3 days -00:00:01.5', null, '1 year 2 mons -3 days -00:00:01.5'],
  ['uuid', 'uuid', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
  ['oid', 'oid', 4294967295, 4294967295, '4294967295'],
  ['json', 'json', JSON_DOC, JSON_DOC, '{"b":[1,2.5,null,true],"a":"x\u00e9","nested":{"k":"v"}}'],
  ['jsonb', 'jsonb', JSON_DOC, JSON_DOC, '{"a": "x\u00e9", "b": [1, 2.5, null, true], "nested": {"k": "v"}}'],
  ['int4_array', 'integer[]', [1, null, -3], [1, null, -3], '{1,NULL,-3}'],
  ['int4_array_2d', 'integer[]', [[1, 2], [3, 4]], [[1, 2], [3, 4]], '{{1,2},{3,4}}'],
  ['int8_array', 'bigint[]', ['9223372036854775807', '0'], ['9223372036854775807', '0'], '{9223372036854775807,0}'],
  ['text_array', 'text[]', ['a', 'b c', null, 'q"uote', '', 'NULL'], ['a', 'b c', null, 'q"uote', '', 'NULL'],
    '{a,"b c",NULL,"q\\"uote","","NULL"}'],
  ['int4_array_empty', 'integer[]', [], [], '{}'],
];

const identity = { getTypeParser: () => (value) => value };
const hexParser = { getTypeParser: () => (value) => Buffer.from(value).toString('hex') };
// postgres-interval's objects compare as their fields.
const plain = (v) => (v !== null && v.constructor && v.constructor.name === 'PostgresInterval' ? { ...v } : v);

for (const c of CASES) {
  const [name, type, sent, parsed, text] = c;
  test(`round trip ${name} (${type})`, async () => {
    const query = `SELECT $1::${type} AS v`;
    if (parsed !== null) {
      const res = await client.query(query, [sent]);
      assert.deepEqual(plain(res.rows[0].v), parsed, 'parsed from text');
    }
    const raw = await client.query({ text: query, values: [sent], types: identity });
    assert.equal(raw.rows[0].v, text, 'raw text');
    // The server reads its own text output back to the same value.
    const literal = `'${text.replace(/'/g, "''")}'`;
    const again = await client.query({ text: `SELECT ${literal}::${type} AS v`, types: identity });
    assert.equal(again.rows[0].v, text, 'text output of the text literal');
  });
}

test('table round trip', async () => {
  const columns = CASES.map(([name, type]) => `${name} ${type}`).join(', ');
  await recreate(client, 'js_types', `id integer PRIMARY KEY, ${columns}`);
  const names = CASES.map(([name]) => name).join(', ');
  const placeholders = CASES.map((_, i) => `$${i + 2}`).join(', ');
  await client.query(`INSERT INTO js_types (id, ${names}) VALUES ($1, ${placeholders})`, [1, ...CASES.map((c) => c[2])]);

  const parsed = await client.query(`SELECT ${names} FROM js_types`);
  for (const [name, , , value] of CASES) {
    if (value !== null) assert.deepEqual(plain(parsed.rows[0][name]), value, `${name} parsed from text`);
  }
  const raw = await client.query({ text: `SELECT ${names} FROM js_types`, types: identity });
  for (const [name, , , , text] of CASES) {
    assert.equal(raw.rows[0][name], text, `${name} raw text`);
  }
  await client.query('DROP TABLE js_types');
});

test('binary results with ASCII-only bytes', async () => {
  // Parsed by node-postgres's binary parsers.
  const res = await client.query({
    text: `SELECT true AS b, 4660::int2 AS i2, 5::int4 AS i4, 9007199254740993::int8 AS i8,
                  2.25::float8 AS f8, 12.0001::numeric AS n,
                  '2000-01-01 00:00:01'::timestamp AS ts, '2000-01-01 01:00:01+01'::timestamptz AS tstz,
                  'hello'::text AS t, ARRAY[1, 2, 3] AS ia, ARRAY['x', 'yz'] AS ta`,
    binary: true,
    queryMode: 'extended', // the simple protocol has text results only
  });
  const row = res.rows[0];
  assert.equal(row.b, true);
  assert.equal(row.i2, 4660);
  assert.equal(row.i4, 5);
  assert.equal(row.i8, '9007199254740993');
  assert.equal(row.f8, 2.25);
  assert.equal(row.n, 12.0001);
  assert.equal(row.ts.getTime(), Date.UTC(2000, 0, 1, 0, 0, 1));
  assert.equal(row.tstz.getTime(), Date.UTC(2000, 0, 1, 0, 0, 1));
  assert.equal(row.t, 'hello');
  assert.deepEqual(row.ia, [1, 2, 3]);
  assert.deepEqual(row.ta, ['x', 'yz']);

  // Types it has no binary parser for arrive as the raw bytes (and float4's
  // binary parser in pg-types is wrong, so it is read raw too).
  const raw = await client.query({
    text: `SELECT '2000-01-02'::date AS d, '00:00:01'::time AS tm, '1 day 00:00:01'::interval AS i,
                  '\\x00017f'::bytea AS by, '{"k": [1]}'::jsonb AS jb, 'ab'::char(3) AS c, 2::float4 AS f4,
                  '01234567-0123-4567-0123-456701234567'::uuid AS u, 12.0001::numeric AS n,
                  ARRAY['a', 'bc']::text[] AS ta`,
    binary: true,
    queryMode: 'extended',
    types: hexParser,
  });
  assert.deepEqual(raw.rows[0], {
    d: '00000001', // days since 2000-01-01
    tm: '00000000000f4240', // microseconds
    i: '00000000000f42400000000100000000', // microseconds, days, months
    by: '00017f',
    jb: '01' + Buffer.from('{"k": [1]}').toString('hex'), // version 1, then the text
    c: '616220', // padded
    f4: '40000000',
    u: '01234567012345670123456701234567',
    n: '0002' + '0000' + '0000' + '0004' + '000c' + '0001', // ndigits, weight, sign, dscale, 12, 0001
    // ndim, has-nulls, element type, length, lower bound, then each element's length and bytes
    ta: '00000001' + '00000000' + '00000019' + '00000002' + '00000001' + '00000001' + '61' + '00000002' + '6263',
  });
});

test('text outputs of PostgreSQL 15', async () => {
  const res = await client.query({
    text: `SELECT '1 year 2 mons 3 days 04:05:06'::interval AS i, 0.1::real AS r, 1e-7::float8 AS f,
                  'infinity'::timestamp AS ts, '-infinity'::date AS d, (2::numeric / 3) AS n,
                  '{"a": 1, "a": 2}'::jsonb AS j, 12.500::numeric(6,2) AS s`,
    types: identity,
  });
  assert.deepEqual(res.rows[0], {
    i: '1 year 2 mons 3 days 04:05:06',
    r: '0.1',
    f: '1e-07',
    ts: 'infinity',
    d: '-infinity',
    n: '0.66666666666666666667',
    j: '{"a": 2}',
    s: '12.50',
  });
});
