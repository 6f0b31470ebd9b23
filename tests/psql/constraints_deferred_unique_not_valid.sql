-- NOT VALID constraints, DEFERRABLE UNIQUE / PRIMARY KEY and column
-- collations as psql shows them: \d's Collation column, constraints with
-- NOT VALID and DEFERRABLE, and the errors with their DETAIL lines.
--
-- NOT VALID foreign key and CHECK constraints.
create table pk (id int primary key);
insert into pk values (1), (2);
create table fk (a int, b int);
insert into fk values (1, 5), (3, -1);
alter table fk add constraint fk_a foreign key (a) references pk not valid;
alter table fk add constraint ck_b check (b > 0) not valid;
\d fk
insert into fk values (7, 1);
insert into fk values (1, -5);
update fk set b = -2 where a = 1;
alter table fk validate constraint fk_a;
alter table fk validate constraint ck_b;
alter table fk validate constraint nope;
alter table pk validate constraint pk_pkey;
delete from fk where a = 3;
alter table fk validate constraint fk_a;
alter table fk validate constraint ck_b;
\d fk
alter table fk add constraint fk_b foreign key (b) references pk deferrable initially deferred not valid;
\d fk
-- DEFERRABLE UNIQUE and PRIMARY KEY.
create table u (id int unique deferrable, v text);
insert into u values (1, 'a'), (2, 'b'), (3, 'c');
update u set id = id + 1;
select * from u order by id;
create table n (id int unique, v text);
insert into n values (1, 'a'), (2, 'b'), (3, 'c');
update n set id = id + 1;
insert into u values (2, 'x');
insert into u values (5, 'x'), (5, 'y');
create table d (id int primary key deferrable initially deferred, v text);
insert into d values (1, 'a'), (2, 'b');
-- A COMMIT that fails the deferred check reports it and keeps nothing.
begin;
insert into d values (3, 'c');
insert into d values (1, 'dup');
select count(*) from d;
commit;
select * from d order by id;
begin;
insert into d values (1, 'dup2');
set constraints all immediate;
rollback;
insert into d values (1, 'z') on conflict do nothing;
create table r (a int references d);
\d d
\d u
-- COPY checks the keys at the end of the statement.
create table dcopy (id int unique deferrable initially immediate, v text);
copy dcopy from stdin;
1	a
2	b
1	c
\.
copy dcopy from stdin;
1	a
2	b
\.
select * from dcopy order by id;
begin;
set constraints dcopy_id_key deferred;
copy dcopy from stdin;
2	again
\.
update dcopy set id = 3 where v = 'again';
commit;
select * from dcopy order by id;
\d dcopy
-- Column collations.
create table ct (a text collate "C", b varchar(10) collate "POSIX", c text, d text collate "default", e name, f int, g text[] collate "C", h char(3) collate ucs_basic);
\d ct
create table bad (a int collate "C");
create table bad (a text collate "nosuch");
alter table ct add column i text collate "C";
alter table ct alter column c type text collate "C";
alter table ct alter column a type text;
alter table ct alter column f type varchar(5) collate "POSIX";
create index ct_c on ct (c);
create index ct_c2 on ct (c collate "POSIX");
\d ct
