-- Where the lake keeps what its files do not: run and players are hive partition directories
-- (read_parquet's hive_partitioning), the shard number is the file name (shard-00012.parquet).
-- DuckDB evaluates this once per file, not per row (filename is constant within a file).
create or replace macro shard_of(path) as
    cast(regexp_extract(path, 'shard-(\d+)\.parquet$', 1) as integer);
