-- The table behind tests/copy/binary_types.bin: one column per type whose
-- binary send/recv format binary COPY uses, and rows with the edge values
-- of each (NULLs, NaN and infinities, negative and fractional numerics,
-- empty strings and arrays, multi-dimensional arrays with NULL elements).
-- Read by scripts/record-copy-binary.py (against PostgreSQL 15) and by
-- crates/tusk/tests/copy_binary.rs (against Tusk); statements are
-- separated by a semicolon at the end of a line.
CREATE TABLE copy_types (
    id int4 PRIMARY KEY,
    i2 int2,
    i8 int8,
    f4 float4,
    f8 float8,
    n numeric,
    n2 numeric(12,4),
    t text,
    vc varchar(12),
    bc char(5),
    b bool,
    by bytea,
    d date,
    tm time,
    tmtz timetz,
    ts timestamp,
    tstz timestamptz,
    iv interval,
    u uuid,
    ia int4[],
    ta text[],
    na numeric[],
    ia2 int8[],
    j json,
    jb jsonb,
    o oid,
    ch "char"
);
INSERT INTO copy_types VALUES
(1, 1, 1, 1.5, 2.25, 3.75, 4.5, 'one', 'uno', 'a', true, '\x00ff10', '2024-03-01', '12:34:56', '12:34:56+02', '2024-03-01 12:34:56', '2024-03-01 12:34:56+00', '1 day', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{1,2,3}', '{a,b}', '{1.5,-2}', '{{1,2},{3,4}}', '{"a": 1}', '{"b": [1, 2], "a": null}', 42, 'x'),
(2, -32768, -9223372036854775808, 'NaN', '-Infinity', 'NaN', -0.0001, '', '', '', false, '\x', '-infinity', '00:00:00', '00:00:00-14:59', '-infinity', 'infinity', '-1 years -2 mons +3 days -04:05:06.789', '00000000-0000-0000-0000-000000000000', '{}', '{NULL,"",x}', '{NaN}', '{{1,NULL},{NULL,4}}', '[]', '{}', 0, ''),
(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(4, 32767, 9223372036854775807, 3.4e38, 1e-300, 123456789012345678901234567890.123456789, 12345678.9876, E'h\u00e9llo \u2713 tab\there\nnewline \\ back', 'varchar vals', 'abcde', true, '\x000102fdfeff', '1999-12-31', '23:59:59.999999', '23:59:59.999999-03:30', '2000-01-01 00:00:00.000001', '2024-03-01 12:34:56.789012+05:30', '1 year 2 mons 3 days 04:05:06.7', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '{-2147483648,2147483647}', '{"with space","quote\"d","back\\slash"}', '{0.001,100000,-123.456}', '{{{1}},{{2}}}', '{"nested": {"k": [true, false, null]}}', '{"z": 1.50, "a": "s"}', 4294967295, 'z'),
(5, 0, 0, '-0', '-0', 0.000000001, 0, 'zero', 'z', 'z', false, '\x00', '0001-01-01', '00:00:00.000001', '24:00:00+14:59', '1970-01-01 00:00:00', '1970-01-01 00:00:00+00', '0', '123e4567-e89b-12d3-a456-426614174000', '{0}', '{""}', '{0.0,-0.50}', '{}', '"str"', '3.10', 1, 'a'),
(6, 100, 10000000000, 'Infinity', 'NaN', 'Infinity', 99999999.9999, 'six', 'six', 'six', true, '\x7f', '2100-02-28', '06:00:00', '06:00:00+00', '4713-11-24 00:00:00 BC', '1900-06-15 08:00:00-07', '-178000000 years', 'c0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', '{NULL}', '{NULL}', '{-Infinity,1e-10}', '{{7}}', 'null', 'null', 2147483648, 'q'),
(7, -1, -1, -1.25, -1e100, -1.5, -99999999.9999, 'seven', 'seven', 's', false, '\x5c', '5874897-12-31', '13:00:00', '13:00:00-01', '294276-12-31 23:59:59.999999', '294276-12-31 23:59:59.999999+00', '-0.000001 seconds', 'c0eebc99-9c0b-4ef8-bb6d-6bb9bd380a13', '{1,NULL,3}', '{"{}","a,b"}', '{100000000,-0.0001}', '{-1,-2}', '1.5e10', '[1.5e10, 1E-5]', 3, 'A');
