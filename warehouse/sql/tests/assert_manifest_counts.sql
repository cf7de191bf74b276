-- scope: lake
-- The manifests agree with the files: every shard a manifest records as finished is committed,
-- with the row counts it records (from the Parquet footers) and rows.games = games x players;
-- every committed shard of a run whose manifest says complete is recorded; no run has shards
-- but no manifest.
with recorded as (
    select s.*, c.players
    from stg_manifest_shards as s
    left join stg_manifest_cells as c on s.run = c.run and s.cell = c.cell
),

files as (
    select
        run,
        shard,
        any_value(players) as players,
        max(num_rows) filter (table_name = 'events') as events_rows,
        max(num_rows) filter (table_name = 'rounds') as rounds_rows,
        max(num_rows) filter (table_name = 'rollups') as rollups_rows,
        max(num_rows) filter (table_name = 'games') as games_rows
    from stg_parquet_files
    group by run, shard
),

manifests as (
    select * from stg_manifests
),

compared as (
    select
        run,
        shard,
        case
            when m.run is null then 'shard committed but the run has no manifest'
            when r.run is null and m.status = 'complete' then 'shard committed but not in the manifest of a complete run'
            when r.run is null then null  -- finished after the manifest was last written
            when f.games_rows is null then 'in the manifest but its games file is missing'
            when f.events_rows is null then 'in the manifest but its events file is missing'
            when f.rounds_rows is null then 'in the manifest but its rounds file is missing'
            when f.rollups_rows is null then 'in the manifest but its rollups file is missing'
            when f.events_rows <> r.events_rows then format('events: {} rows in the manifest, {} in the file', r.events_rows, f.events_rows)
            when f.rounds_rows <> r.rounds_rows then format('rounds: {} rows in the manifest, {} in the file', r.rounds_rows, f.rounds_rows)
            when f.rollups_rows <> r.rollups_rows then format('rollups: {} rows in the manifest, {} in the file', r.rollups_rows, f.rollups_rows)
            when f.games_rows <> r.games_rows then format('games: {} rows in the manifest, {} in the file', r.games_rows, f.games_rows)
            when r.games_rows <> r.games * f.players then format('manifest says {} games but {} games rows at {} players', r.games, r.games_rows, f.players)
            when r.games <> r.stop - r.start then format('manifest says {} games for [{}, {})', r.games, r.start, r.stop)
        end as problem
    from recorded as r
    -- a full join's run and shard: the side's that has the shard
    full outer join files as f using (run, shard)
    left join manifests as m using (run)
)

select * from compared where problem is not null
