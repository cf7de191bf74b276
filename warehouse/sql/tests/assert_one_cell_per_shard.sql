-- scope: lake
-- Every shard holds games of one cell (pipeline/plan.py splits each cell into shards): the
-- marts find a round's cell through its shard (int_shard_cells).
with shards as (
    select run, shard, min(cell) as first_cell, max(cell) as last_cell
    from stg_games
    group by run, shard
)

select
    run,
    shard,
    format('games of cells {} to {} in one shard', first_cell, last_cell) as problem
from shards
where first_cell <> last_cell
