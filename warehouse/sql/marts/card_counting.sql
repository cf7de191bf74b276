-- The gain from counting cards: each counting policy against its non-counting twin (a policy
-- named like another plus 'c': evc/ev, bustc:P/bust:P), in points per round and in win rate.
-- A row names the counting policy's cell (`lineup`) and the twin's (`base_lineup`) in one run,
-- variant, ruleset and field size: a twin is never taken from a cell played under other rules.
-- Every figure is the pooled ratio of the statistics contract over the games compared: points
-- per round = the policy's points / its rounds, win rate = its wins / its seats (y, n per game
-- from fct_policy_games), so a side's figure is the points_per_round / win_rates figure of that
-- cell and policy. The gain is R_c - R_b.
--
-- method 'paired' (common random numbers): games with equal (run, pair, cell_game), hence
-- equal seeds, but different cells saw the same shuffles. Where two such cells differ only in
-- seats that swap the twin for the counting policy, a pair of games is one cluster. Each
-- game's linearised figure z_g = R + (y_g - R n_g) / (Sn / G) (its mean over the G pairs is R;
-- for a constant n_g it is y_g / n_g) makes the gain the mean of d_g = z_cg - z_bg, and its
-- 95% interval the clustered one of d_g with n = 1 (clustered_* macros): the delta-method
-- variance of R_c - R_b over pairs, G / (G - 1) sum e_g^2 with
-- e_g = (y_cg - R_c n_cg) / Sn_c - (y_bg - R_b n_bg) / Sn_b.
--
-- method 'unpaired' (every other counting/twin pair of cells): two different cells played
-- different games, so the variance of the gain is the two cells' clustered variances added,
-- each with its own games' G / (G - 1) (cluster_ratio_half, as win_rates, points_per_round and
-- `flip7 compare`): half = sqrt(half_c^2 + half_b^2), NULL when either cell has under two
-- games. Both policies in one cell (lineup = base_lineup) share its games: the clusters are
-- the cell's games and the interval is the paired one above over them (z_g = R for a game where
-- a policy did not sit), which keeps the covariance of sharing the table.
-- Cost: everything comes from the manifests and the shards' rollups. The paired and same-cell
-- intervals need products of two per-game figures, which the rollups' per-game lists (game_y,
-- game_n of the two policies' win and points) give shard by shard: each pair of shards holding
-- the same games adds its sums and second moments (int_twin_moments: the shards read a group of
-- the same first game at a time, so memory holds one group's lists, not the run's), and the
-- variance is computed from their totals in closed form.
with cells as (
    select * from int_cells
),

-- Each cell's win and points sums per policy, from the rollups.
sums as (
    select * from int_cell_rollups
    where grouping = 'policy' and figure in ('win', 'points')
),

cell_policies as (
    select distinct run, variant, ruleset, players, lineup, cell, policy from sums
),

policies as (
    select distinct
        policy,
        regexp_replace(policy, '^([A-Za-z_][A-Za-z0-9_]*)c(:|$)', '\1\2') as twin
    from cell_policies
),

-- The manifests' line-ups, seat by seat: two cells of one CRN group (same `pair`, so the same
-- shuffles at the same game of the cell) seat game i of each with its line-up rotated by the
-- same i seats, so their seats differ in every game where their line-ups differ.
lineups as (
    select m.run, c.cell, c.pair, c.players, c.lineup as seats
    from stg_manifests as m, unnest(m.cells) as u(c)
),

seat_pairs as (
    select
        a.run,
        a.cell as cell_a,
        b.cell as cell_b,
        unnest(a.seats) as policy_a,
        unnest(b.seats) as policy_b
    from lineups as a
    inner join lineups as b
        on a.run = b.run and a.pair = b.pair and a.players = b.players and a.cell <> b.cell
),

matched as (
    select
        *,
        policy_a <> policy_b as differ,
        policy_a <> policy_b
        and regexp_replace(policy_a, '^([A-Za-z_][A-Za-z0-9_]*)c(:|$)', '\1\2') = policy_b
            as swap
    from seat_pairs
),

-- Pairs of cells whose seats differ only by swaps of the twin for the counting policy (one
-- counting policy), played under the same rules: every game of one pairs with the game of the
-- other dealt the same shuffles.
cell_pairs as (
    select
        m.run,
        a.variant,
        a.ruleset,
        a.players,
        a.lineup,
        b.lineup as base_lineup,
        m.cell_a,
        m.cell_b,
        min(m.policy_a) filter (m.swap) as counting,
        min(m.policy_b) filter (m.swap) as base
    from matched as m
    inner join cells as a on m.run = a.run and m.cell_a = a.cell
    inner join cells as b on m.run = b.run and m.cell_b = b.cell
    where a.ruleset = b.ruleset and a.variant = b.variant
    group by all
    having
        count(*) filter (m.swap) > 0
        and count(*) filter (m.swap) = count(*) filter (m.differ)
        and min(m.policy_a) filter (m.swap) = max(m.policy_a) filter (m.swap)
),

-- Every counting policy's cell beside every cell of its twin under the same rules.
twins as (
    select
        c.run,
        c.variant,
        c.ruleset,
        c.players,
        c.lineup,
        b.lineup as base_lineup,
        c.cell as cell_c,
        b.cell as cell_b,
        c.policy as counting,
        b.policy as base
    from cell_policies as c
    inner join policies as p on c.policy = p.policy
    inner join cell_policies as b using (run, variant, ruleset, players)
    where b.policy = p.twin and b.policy <> c.policy
),

-- Both policies in one cell (never a pair of cells).
same_cell as (
    select * from twins where lineup = base_lineup
),

-- The comparisons read per game, each a set of clusters shared by both sides: a pair of cells
-- (method 'paired': a cluster is a pair of games dealt the same shuffles) or the one cell both
-- policies sit in (its games; the counting side's cell on both sides).
shared as (
    select
        run, variant, ruleset, players, lineup, base_lineup, counting, base, cell_a as cell_c,
        cell_b, 'paired' as method
    from cell_pairs
    union all
    select
        run, variant, ruleset, players, lineup, base_lineup, counting, base, cell_c,
        cell_c as cell_b, 'unpaired' as method
    from same_cell
),

-- Each comparison's sums and second moments over all its clusters, per figure: g and the sums
-- of y, n of each side and of their products over the pairs of games (int_twin_moments, read
-- from the rollups' per-game lists group of shards by group, warehouse/twins.py).
moments as (
    select
        k.run, k.variant, k.ruleset, k.players, k.lineup, k.base_lineup, k.counting, k.base,
        k.method, m.figure,
        sum(m.g) as g,
        sum(m.syc) as syc,
        sum(m.snc) as snc,
        sum(m.syb) as syb,
        sum(m.snb) as snb,
        sum(m.ycyc) as ycyc,
        sum(m.ncnc) as ncnc,
        sum(m.ycnc) as ycnc,
        sum(m.ybyb) as ybyb,
        sum(m.nbnb) as nbnb,
        sum(m.ybnb) as ybnb,
        sum(m.ycyb) as ycyb,
        sum(m.ycnb) as ycnb,
        sum(m.ncyb) as ncyb,
        sum(m.ncnb) as ncnb
    from shared as k
    inner join int_twin_moments as m using (run, cell_c, counting, cell_b, base)
    group by all
),

-- The gain R_c - R_b and its standard error. Each cluster's linearised difference is
-- d_g = z_cg - z_bg, z = R + (y - R n) / (Sn / G), whose mean is the gain; its clustered
-- variance (clustered_* with n = 1) is G / (G - 1) sum u_g^2 / G^2 with
-- u_g = a (y_cg - R_c n_cg) - b (y_bg - R_b n_bg), a = G / Sn_c, b = G / Sn_b (the mean of u_g
-- is 0), sum u_g^2 expanded in the moments above.
gains as (
    select
        *,
        syc / snc as r_c,
        syb / snb as r_b,
        case when g >= 2 and snc <> 0 and snb <> 0 then
            sqrt(
                cast(g as double) / (g - 1)
                * greatest(
                    (g / snc) * (g / snc)
                    * (ycyc - 2 * (syc / snc) * ycnc + (syc / snc) * (syc / snc) * ncnc)
                    + (g / snb) * (g / snb)
                    * (ybyb - 2 * (syb / snb) * ybnb + (syb / snb) * (syb / snb) * nbnb)
                    - 2 * (g / snc) * (g / snb)
                    * (
                        ycyb - (syb / snb) * ycnb - (syc / snc) * ncyb
                        + (syc / snc) * (syb / snb) * ncnb
                    ),
                    0.0
                )
                / (cast(g as double) * g)
            )
        end as se
    from moments
),

one_set as (
    select
        w.run,
        w.variant,
        w.ruleset,
        w.players,
        w.lineup,
        w.base_lineup,
        w.counting,
        w.base,
        w.method,
        case when w.method = 'paired' then cast(w.g as bigint) end as pairs,
        cast(w.g as bigint) as games,
        case when w.method = 'paired' then cast(w.g as bigint) else cast(w.snc as bigint) end
            as n_counting,
        case when w.method = 'paired' then cast(w.g as bigint) else cast(w.snb as bigint) end
            as n_base,
        p.r_c as ppr_counting,
        p.r_b as ppr_base,
        p.r_c - p.r_b as ppr_gain,
        p.se as ppr_gain_se,
        w.r_c as win_counting,
        w.r_b as win_base,
        w.r_c - w.r_b as win_gain,
        w.se as win_gain_se
    from gains as w
    inner join gains as p
        using (run, variant, ruleset, players, lineup, base_lineup, counting, base, method)
    where w.figure = 'win' and p.figure = 'points'
),

-- The pairs of cells that are not a paired comparison.
candidates as (
    select c.*
    from twins as c
    anti join (
        select distinct run, ruleset, players, lineup, base_lineup, counting, base
        from one_set
        where method = 'paired'
    ) as q using (run, ruleset, players, lineup, base_lineup, counting, base)
),

-- Each cell's (policy's) figure and clustered half-width over its own games: the win_rates and
-- points_per_round figures of that cell and policy (unclipped), from the sums.
cell_figures as (
    select
        w.run,
        w.cell,
        w.policy,
        w.games,
        w.n as seats,
        w.y / w.n as win,
        cluster_ratio_half(w.games, w.y, w.n, w.yy, w.nn, w.yn) as win_half,
        p.y / p.n as ppr,
        cluster_ratio_half(p.games, p.y, p.n, p.yy, p.nn, p.yn) as ppr_half
    from sums as w
    inner join sums as p using (run, cell, policy)
    where w.figure = 'win' and p.figure = 'points'
),

-- Two different cells: the variance of the gain is the two cells' variances added.
two_cells as (
    select
        k.run,
        k.variant,
        k.ruleset,
        k.players,
        k.lineup,
        k.base_lineup,
        k.counting,
        k.base,
        'unpaired' as method,
        cast(null as bigint) as pairs,
        c.games + b.games as games,
        cast(c.seats as bigint) as n_counting,
        cast(b.seats as bigint) as n_base,
        c.ppr as ppr_counting,
        b.ppr as ppr_base,
        c.ppr - b.ppr as ppr_gain,
        sqrt(c.ppr_half * c.ppr_half + b.ppr_half * b.ppr_half) / 1.959963984540054 as ppr_gain_se,
        c.win as win_counting,
        b.win as win_base,
        c.win - b.win as win_gain,
        sqrt(c.win_half * c.win_half + b.win_half * b.win_half) / 1.959963984540054 as win_gain_se
    from candidates as k
    inner join cell_figures as c
        on k.run = c.run and k.cell_c = c.cell and k.counting = c.policy
    inner join cell_figures as b
        on k.run = b.run and k.cell_b = b.cell and k.base = b.policy
    where k.lineup <> k.base_lineup
),

final as (
    select
        *,
        ppr_gain - 1.959963984540054 * ppr_gain_se as ppr_gain_lo,
        ppr_gain + 1.959963984540054 * ppr_gain_se as ppr_gain_hi,
        win_gain - 1.959963984540054 * win_gain_se as win_gain_lo,
        win_gain + 1.959963984540054 * win_gain_se as win_gain_hi
    from (
        select * from one_set
        union all by name
        select * from two_cells
    )
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
