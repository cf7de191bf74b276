-- One row per Parquet file of a committed shard with its row count from the file footer (no
-- scan): what the manifest's counts are checked against. parquet_footers (macros/lake.sql) is
-- DuckDB's parquet_file_metadata, or the footers pyarrow read where DuckDB reads no file.
with source as (
    select file_name, num_rows
    from parquet_footers(all_files())
),

final as (
    select
        regexp_extract(file_name, '([a-z]+)/run=[^/]+/players=\d+/shard-\d+\.parquet$', 1) as table_name,
        regexp_extract(file_name, '/run=([^/]+)/players=\d+/shard-\d+\.parquet$', 1) as run,
        cast(regexp_extract(file_name, '/players=(\d+)/shard-\d+\.parquet$', 1) as integer) as players,
        cast(regexp_extract(file_name, '/shard-(\d+)\.parquet$', 1) as integer) as shard,
        num_rows,
        file_name as path
    from source
)

select * from final
