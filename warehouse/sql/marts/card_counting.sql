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
-- the same games adds its sums and second moments, and the variance is computed from their
-- totals in closed form, so the mart costs shards, not games.
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
    inner join cell_policies as b
        on
            c.run = b.run
            and c.variant = b.variant
            and c.ruleset = b.ruleset
            and c.players = b.players
            and b.policy = p.twin
            and b.policy <> c.policy
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

wanted as (
    select run, cell_c as cell, counting as policy from shared
    union
    select run, cell_b as cell, base as policy from shared
),

-- Each shard's per-game lists of the two policies' (y, n): wins over seats and points over
-- seat-rounds of the policy's seats in each game, in game order, as the rollups store them for
-- every shard (game i of a list is the cell's game first_game + i: every policy of a cell sits
-- in every game of it). Only these rows' lists are read.
game_lists as (
    select
        r.run,
        r.cell,
        r.policy,
        r.figure,
        r.first_game,
        cast(r.game_y as double []) as ys,
        cast(r.game_n as double []) as ns
    from stg_rollups as r
    semi join wanted as w on r.run = w.run and r.cell = w.cell and r.policy = w.policy
    where r.grouping = 'policy' and r.figure in ('win', 'points')
),

sided as (
    select
        k.*,
        c.figure,
        c.first_game,
        c.ys as yc,
        c.ns as nc
    from shared as k
    inner join game_lists as c
        on k.run = c.run and k.cell_c = c.cell and k.counting = c.policy
),

-- A shard of the counting side beside the shard of the base side that holds the same games
-- (same first game and length: the shards of two cells of one run are split alike), so that
-- game i of one list pairs with game i of the other.
aligned as (
    select
        s.*,
        b.ys as yb,
        b.ns as nb
    from sided as s
    inner join game_lists as b
        on
            s.run = b.run
            and s.cell_b = b.cell
            and s.base = b.policy
            and s.figure = b.figure
            and s.first_game = b.first_game
            and len(s.yc) = len(b.ys)
),

-- Each aligned pair of shards' sums and second moments over its pairs of games: they add
-- across pairs of shards, so the interval below costs pairs of shards, not games.
aligned_moments as (
    select
        run, variant, ruleset, players, lineup, base_lineup, counting, base, method, figure,
        len(yc) as g,
        list_sum(yc) as syc,
        list_sum(nc) as snc,
        list_sum(yb) as syb,
        list_sum(nb) as snb,
        list_dot_product(yc, yc) as ycyc,
        list_dot_product(nc, nc) as ncnc,
        list_dot_product(yc, nc) as ycnc,
        list_dot_product(yb, yb) as ybyb,
        list_dot_product(nb, nb) as nbnb,
        list_dot_product(yb, nb) as ybnb,
        list_dot_product(yc, yb) as ycyb,
        list_dot_product(yc, nb) as ycnb,
        list_dot_product(nc, yb) as ncyb,
        list_dot_product(nc, nb) as ncnb
    from aligned
),

-- Shards that align with none of the other side's (cells split otherwise): their lists
-- unnested, one row per game of the cell, and paired on the cell's game.
unaligned_games as (
    select
        run, variant, ruleset, players, lineup, base_lineup, counting, base, method, figure,
        cell_c, cell_b, 'c' as side,
        first_game + generate_subscripts(yc, 1) - 1 as cell_game,
        unnest(yc) as y,
        unnest(nc) as n
    from sided as s
    where not exists (
        select 1 from aligned as a
        where
            a.run = s.run and a.cell_c = s.cell_c and a.cell_b = s.cell_b
            and a.counting = s.counting and a.base = s.base and a.figure = s.figure
            and a.first_game = s.first_game
    )
    union all
    select
        k.run, k.variant, k.ruleset, k.players, k.lineup, k.base_lineup, k.counting, k.base,
        k.method, b.figure, k.cell_c, k.cell_b, 'b' as side,
        b.first_game + generate_subscripts(b.ys, 1) - 1 as cell_game,
        unnest(b.ys) as y,
        unnest(b.ns) as n
    from shared as k
    inner join game_lists as b
        on k.run = b.run and k.cell_b = b.cell and k.base = b.policy
    where not exists (
        select 1 from aligned as a
        where
            a.run = k.run and a.cell_c = k.cell_c and a.cell_b = k.cell_b
            and a.counting = k.counting and a.base = k.base and a.figure = b.figure
            and a.first_game = b.first_game
    )
),

unaligned_moments as (
    select
        c.run, c.variant, c.ruleset, c.players, c.lineup, c.base_lineup, c.counting, c.base,
        c.method, c.figure,
        count(*) as g,
        sum(c.y) as syc,
        sum(c.n) as snc,
        sum(b.y) as syb,
        sum(b.n) as snb,
        sum(c.y * c.y) as ycyc,
        sum(c.n * c.n) as ncnc,
        sum(c.y * c.n) as ycnc,
        sum(b.y * b.y) as ybyb,
        sum(b.n * b.n) as nbnb,
        sum(b.y * b.n) as ybnb,
        sum(c.y * b.y) as ycyb,
        sum(c.y * b.n) as ycnb,
        sum(c.n * b.y) as ncyb,
        sum(c.n * b.n) as ncnb
    from unaligned_games as c
    inner join unaligned_games as b
        on
            c.run = b.run and c.cell_c = b.cell_c and c.cell_b = b.cell_b
            and c.counting = b.counting and c.base = b.base and c.figure = b.figure
            and c.cell_game = b.cell_game
    where c.side = 'c' and b.side = 'b'
    group by all
),

-- Each comparison's sums and moments over all its clusters, per figure.
moments as (
    select
        run, variant, ruleset, players, lineup, base_lineup, counting, base, method, figure,
        sum(g) as g,
        sum(syc) as syc,
        sum(snc) as snc,
        sum(syb) as syb,
        sum(snb) as snb,
        sum(ycyc) as ycyc,
        sum(ncnc) as ncnc,
        sum(ycnc) as ycnc,
        sum(ybyb) as ybyb,
        sum(nbnb) as nbnb,
        sum(ybnb) as ybnb,
        sum(ycyb) as ycyb,
        sum(ycnb) as ycnb,
        sum(ncyb) as ncyb,
        sum(ncnb) as ncnb
    from (
        select * from aligned_moments
        union all by name
        select * from unaligned_moments
    )
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
        on
            w.run = p.run
            and w.variant = p.variant
            and w.ruleset = p.ruleset
            and w.players = p.players
            and w.lineup = p.lineup
            and w.base_lineup = p.base_lineup
            and w.counting = p.counting
            and w.base = p.base
            and w.method = p.method
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
    ) as q
        on
            c.run = q.run
            and c.ruleset = q.ruleset
            and c.players = q.players
            and c.lineup = q.lineup
            and c.base_lineup = q.base_lineup
            and c.counting = q.counting
            and c.base = q.base
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
    inner join sums as p on w.run = p.run and w.cell = p.cell and w.policy = p.policy
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
