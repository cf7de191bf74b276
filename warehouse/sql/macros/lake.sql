-- One table of the lake, read as the lake contract says (pipeline/schema.py): the files hold
-- what is in them; run and players are hive partition directories, the shard number is the
-- file name (shard-00012.parquet). Every staging view reads through this, so the path contract
-- is stated once. DuckDB evaluates the file-name parse once per file, not per row (filename is
-- constant within a file).
create or replace macro lake_table(files) as table
    select
        cast(run as varchar) as run,
        cast(players as integer) as players,
        cast(regexp_extract(filename, 'shard-(\d+)\.parquet$', 1) as integer) as shard,
        * exclude (run, players, filename)
    from read_parquet(
        files,
        hive_partitioning = true,
        hive_types = {'run': 'VARCHAR', 'players': 'INTEGER'},
        filename = true
    );

-- The events or rounds of a list of their files (one table's): their files store them compactly
-- (lakecontract/codec.py), so DuckDB reads them decoded, from the pyarrow dataset the warehouse
-- registers as `lake_<table>` (warehouse.db.attach_stored): the same columns as lake_table.
create or replace macro stored_table(files) as table
    select * from query_table(
        'lake_' || regexp_extract(files[1], '([a-z]+)/run=[^/]+/players=\d+/shard-\d+\.parquet$', 1)
    );

-- The rollups rows without their per-game lists (game_y, game_n: only card_counting needs them,
-- and warehouse/twins.py reads them itself): what int_cell_sums sums in its one pass. A
-- read-only warehouse replaces it with a stream read file by file (warehouse/rollups.py).
create or replace macro rollup_rows(files) as table
    select * exclude (game_y, game_n) from lake_table(files);

-- The rollups files' columns typed (pipeline/schema.py's ROLLUPS, after run, players and shard),
-- from the relation of that name holding them (a CTE of the caller): stg_rollups reads the files
-- through lake_table, stg_rollup_rows through rollup_rows, and both type them alike.
create or replace macro typed_rollups(relation) as table
    select * replace (
        cast(variant as varchar) as variant,
        cast(ruleset as varchar) as ruleset,
        cast(seating as varchar) as seating,
        cast(grouping as varchar) as grouping,
        cast(figure as varchar) as figure,
        cast(policy as varchar) as policy,
        cast(opponent as varchar) as opponent,
        cast(key as integer) as key
    )
    from query_table(relation);

-- The row count of each file from its Parquet footer (no scan). A read-only warehouse replaces
-- it with the footers pyarrow read (warehouse/db.py): there DuckDB opens no file itself.
create or replace macro parquet_footers(files) as table
    select file_name, num_rows from parquet_file_metadata(files);

-- A packed event code's fields (flip7.events.pack: bits 0-4 kind, 5-10 player + 1, 11-16
-- card + 1, 17-22 target + 1, 23-54 value, a signed 32-bit integer); -1 is "none".
create or replace macro code_kind(c) as cast(c & 31 as tinyint);
create or replace macro code_player(c) as cast(((c >> 5) & 63) - 1 as tinyint);
create or replace macro code_card(c) as cast(((c >> 11) & 63) - 1 as tinyint);
create or replace macro code_target(c) as cast(((c >> 17) & 63) - 1 as tinyint);
create or replace macro code_value(c) as cast(c >> 23 as integer);

-- The event a stored element of `codes` holds, without the HIT folded into it (the bits from
-- 2^55 up: such an event's value is never negative, so those bits are the HIT's alone). For
-- passes that need no HIT; event_codes and event_pairs give the HITs too.
create or replace macro element_event(e) as
    case when e >= 36028797018963968 then e & 36028797018963967 else e end;

-- The events of a stored game row's `codes` (pipeline/schema.py), one element per event: an
-- element at or above 2^55 is a HIT folded into the event after it, by the same player, with
-- value (element >> 55) - 1; it becomes that HIT (kind 2, card and target -1) and the event
-- (the bits below 55).
create or replace macro event_codes(codes) as
    flatten(list_transform(codes, lambda c:
        case
            when c < 36028797018963968 then [c]
            else [2 | (c & 2016) | (((c >> 55) - 1) << 23), c & 36028797018963967]
        end));

-- The round of each element of a stored game row's `codes`, from its `rounds` (how many
-- elements each round has, rounds in order): round r repeated rounds[r] times, one list beside
-- `codes` (unnest both in one select to pair them).
create or replace macro element_rounds(rounds) as
    flatten(list_transform(rounds, lambda n, r: list_resize([]::smallint[], n, r)));

-- The events of a stored game row in order, HITs unfolded as event_codes does, each as a pair
-- (its round, its packed code): a folded element's HIT and event are both in its round.
create or replace macro event_pairs(rounds, codes) as
    flatten(list_transform(list_zip(element_rounds(rounds), codes), lambda p:
        case
            when p[2] < 36028797018963968 then [p]
            else [
                (p[1], 2 | (p[2] & 2016) | (((p[2] >> 55) - 1) << 23)),
                (p[1], p[2] & 36028797018963967)
            ]
        end));

-- The events a relation with stg_event_games' columns stores (its name: a view, or a CTE of the
-- caller), one row per element of `codes`, beside its round (element_rounds, both lists
-- unnested in one select, no list sliced per round) and unpacked into kind, player, card,
-- target and value, a HIT folded into an element left out (element_event): what the rebuilds
-- from the log read (int_event_groups, int_vengeance_rounds), which need no HIT, no
-- ROUND_SCORE and no sequence number. A caller's filter on kind reaches the unpacking; the
-- fields it does not select are not computed.
create or replace macro event_elements(relation) as table
    select
        run,
        game,
        round,
        code_kind(code) as kind,
        code_player(code) as player,
        code_card(code) as card,
        code_target(code) as target,
        code_value(code) as value
    from (
        select run, game, round, element_event(element) as code
        from (
            select run, game, unnest(element_rounds(rounds)) as round, unnest(codes) as element
            from query_table(relation)
        )
    );

-- The seq of a stored event (flip7.events.restore_round_scores): j, its place among the game's
-- stored events (HITs unfolded, from 0), plus the ROUND_SCOREs logged before it: n in each
-- earlier round of an n-seat game; in its own round, all n before ROUND_END, ROUND_CAP and
-- GAME_END, and those of the seats before it before an SC_DISCARDED of value 1 (a Second Chance
-- set aside at round end: seat by seat, the engine logs that and then the seat's ROUND_SCORE).
create or replace macro event_seq(j, round, players, kind, player, value) as
    j + (round - 1) * players
    + case
        when kind = 10 and value = 1 then player
        when kind between 16 and 18 then players
        else 0
    end;
