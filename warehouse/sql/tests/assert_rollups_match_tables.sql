-- scope: shard
-- Every shard's rollup (the statistics the marts are built from) equals the one rebuilt from
-- its games and rounds files: a row stored but not rebuilt, or rebuilt but not stored (a
-- tampered, stale or missing rollups file), fails by shard, group and figure.
with stored as (
    select
        run, shard, cell, variant, ruleset, seating, first_game, grouping, figure, policy,
        opponent, key, games, y, n, yy, nn, yn, game_y, game_n
    from stg_rollups
),

rebuilt as (
    select
        run, shard, cell, variant, ruleset, seating, first_game, grouping, figure, policy,
        opponent, key, games, y, n, yy, nn, yn, game_y, game_n
    from int_rollups_from_tables
),

only_stored as (
    select * from stored
    except all
    select * from rebuilt
),

only_rebuilt as (
    select * from rebuilt
    except all
    select * from stored
),

final as (
    select 'stored, not rebuilt from the games and rounds' as problem, * from only_stored
    union all
    select 'rebuilt from the games and rounds, not stored' as problem, * from only_rebuilt
)

select * from final
order by run, shard, grouping, figure, policy, opponent, key, problem
