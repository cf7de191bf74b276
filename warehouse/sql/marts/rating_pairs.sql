-- materialized: view
-- Calibration of the ratings: for every two policies of a fit (per field size, and pooled with
-- players NULL), the chance the Plackett-Luce model gives `policy` to finish ahead of
-- `opponent` at a table where both sit, 1 / (1 + exp(-(rating - opponent's rating))), against
-- the observed share of their meetings it finished ahead in (ties left out, as head_to_head),
-- each with its 95% interval: the model's by the delta method from the ratings' covariance,
-- the observed one clustered by game (from the shards' 'versus' rollups, cells added up).
-- `disagrees` when observed - model is beyond 1.96 standard errors of the difference (the two
-- taken as independent; the observed side's standard error is at least the binomial one of
-- the model's chance over the meetings): a pair the model mis-ranks beyond chance. At 5% a few such pairs are
-- expected among many by chance alone. One row per pair, `policy` the higher-rated one.
with rated as (
    select * from ratings
),

versus as (
    select * from int_cell_rollups
    where grouping = 'versus' and figure = 'ahead'
),

observed as (
    select
        run,
        ruleset,
        players,
        policy,
        opponent,
        sum(games) as games,
        sum(y) as y,
        sum(n) as n,
        sum(yy) as yy,
        sum(nn) as nn,
        sum(yn) as yn
    from versus
    group by grouping sets ((run, ruleset, players, policy, opponent), (run, ruleset, policy, opponent))
),

model as (
    select
        a.run,
        a.variant,
        a.ruleset,
        a.players,
        a.policy,
        b.policy as opponent,
        a.rating - b.rating as diff,
        sqrt(greatest(a.se * a.se + b.se * b.se - 2 * a.cov[b.idx], 0.0)) as diff_se
    from rated as a
    inner join rated as b
        on a.run = b.run and a.ruleset = b.ruleset and a.players is not distinct from b.players
    where a.rating > b.rating or (a.rating = b.rating and a.policy < b.policy)
),

joined as (
    select
        m.*,
        1.0 / (1.0 + exp(-m.diff)) as model_ahead,
        1.0 / (1.0 + exp(-(m.diff - 1.959963984540054 * m.diff_se))) as model_ahead_lo,
        1.0 / (1.0 + exp(-(m.diff + 1.959963984540054 * m.diff_se))) as model_ahead_hi,
        -- d p / d diff = p (1 - p): the model's chance's standard error
        m.diff_se * exp(-m.diff) / ((1.0 + exp(-m.diff)) * (1.0 + exp(-m.diff))) as model_se,
        o.games,
        o.n as meetings,
        o.y as ahead,
        o.y / nullif(o.n, 0) as observed_ahead,
        -- never under the binomial spread the model itself implies: a share of 0 or 1 over a
        -- few meetings has a clustered spread of 0, which would flag any gap
        greatest(
            cluster_ratio_half(o.games, o.y, o.n, o.yy, o.nn, o.yn) / 1.959963984540054,
            sqrt(
                (1.0 / (1.0 + exp(-m.diff))) * (1.0 - 1.0 / (1.0 + exp(-m.diff))) / nullif(o.n, 0)
            )
        ) as observed_se,
        cluster_rate_lo(o.games, o.y, o.n, o.yy, o.nn, o.yn) as observed_ahead_lo,
        cluster_rate_hi(o.games, o.y, o.n, o.yy, o.nn, o.yn) as observed_ahead_hi
    from model as m
    left join observed as o
        on m.run = o.run and m.ruleset = o.ruleset and m.players is not distinct from o.players
        and m.policy = o.policy and m.opponent = o.opponent
),

final as (
    select
        run,
        variant,
        ruleset,
        players,
        policy,
        opponent,
        games,
        meetings,
        ahead,
        model_ahead,
        model_ahead_lo,
        model_ahead_hi,
        observed_ahead,
        observed_ahead_lo,
        observed_ahead_hi,
        observed_ahead - model_ahead as gap,
        sqrt(observed_se * observed_se + model_se * model_se) as gap_se,
        coalesce(
            abs(observed_ahead - model_ahead)
            > 1.959963984540054 * sqrt(observed_se * observed_se + model_se * model_se),
            false
        ) as disagrees
    from joined
)

select * from final
