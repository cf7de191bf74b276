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

-- The row count of each file from its Parquet footer (no scan). A read-only warehouse replaces
-- it with the footers pyarrow read (warehouse/db.py): there DuckDB opens no file itself.
create or replace macro parquet_footers(files) as table
    select file_name, num_rows from parquet_file_metadata(files);

-- The events of a stored round row's `codes` (pipeline/schema.py), one element per event: an
-- element at or above 2^55 is a HIT folded into the event after it, by the same player, with
-- value (element >> 55) - 1; it becomes that HIT (kind 2, card and target -1) and the event
-- (the bits below 55).
create or replace macro event_codes(codes) as
    flatten(list_transform(codes, lambda c:
        case
            when c < 36028797018963968 then [c]
            else [2 | (c & 2016) | (((c >> 55) - 1) << 23), c & 36028797018963967]
        end));
