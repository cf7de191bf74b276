-- One row per committed shard with its cell (a shard holds games of one cell: pipeline/plan.py
-- splits each cell into shards), so that per-round rows, which carry their shard but not their
-- cell, find their cell through a join with a table of a few rows, not one row per game.
with shards as (
    select run, shard, any_value(cell) as cell
    from stg_rollup_rows
    where grouping = 'cell' and figure = 'rounds'
    group by run, shard
),

cells as (
    select columns(lambda c: is_cell_column(c)) from int_cells
),

final as (
    select c.*, s.shard
    from shards as s
    inner join cells as c on s.run = c.run and s.cell = c.cell
)

select * from final
