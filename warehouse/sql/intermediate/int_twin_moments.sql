-- Every counting policy of a cell beside its twin in any cell of the same run (the same cell
-- included), per figure (win, points): g, the pairs of games dealt the same shuffles, and the
-- sums of each side's y and n and of their products over those pairs (syc .. ncnb: c the
-- counting side, b the twin's). Computed by warehouse/twins.py from the rollups' per-game lists,
-- group of shards by group (one first game at a time), when a query first reads it; the
-- card_counting mart keeps the comparisons it makes. The sums are of integers, exact as doubles.
with source as (
    select * from lake_twin_moments
),

final as (
    select
        run,
        cell_c,
        counting,
        cell_b,
        base,
        figure,
        g,
        syc,
        snc,
        syb,
        snb,
        ycyc,
        ncnc,
        ycnc,
        ybyb,
        nbnb,
        ybnb,
        ycyb,
        ycnb,
        ncyb,
        ncnb
    from source
)

select * from final
