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
-- Cost: the pairs of cells and every unpaired figure come from the manifests and the shards'
-- rollups; only the paired games and the same-cell games are read per game (a product of two
-- per-game figures is not a sum over one shard's games), and only the two policies' seats in
-- the cells concerned (none in a run without counting).
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

-- The seats read per game: the counting policy's and its twin's in each pair of cells, and
-- both policies' in a cell that seats both; (wins, seats, points, rounds) of the policy's seats
-- in each game, as the cells' own figures count them (fct_policy_games). One scan of the games,
-- filtered before anything is grouped (none at all in a run without counting).
wanted as (
    select run, cell_a as cell, counting as policy from cell_pairs
    union
    select run, cell_b as cell, base as policy from cell_pairs
    union
    select run, cell_c as cell, counting as policy from same_cell
    union
    select run, cell_c as cell, base as policy from same_cell
),

picked as (
    select
        g.run,
        g.cell,
        g.cell_game,
        g.game,
        g.policy,
        count(*) as seats,
        count(*) filter (g.winner) as wins,
        sum(g.total) as points,
        sum(g.rounds) as rounds
    from stg_games as g
    semi join wanted as w on g.run = w.run and g.cell = w.cell and g.policy = w.policy
    group by g.run, g.cell, g.cell_game, g.game, g.policy
),

paired_games as (
    select
        p.run,
        p.variant,
        p.ruleset,
        p.players,
        p.lineup,
        p.base_lineup,
        p.counting,
        p.base,
        'paired' as method,
        c.cell_game as cluster,
        c.wins as wins_c,
        c.seats as seats_c,
        c.points as points_c,
        c.rounds as rounds_c,
        b.wins as wins_b,
        b.seats as seats_b,
        b.points as points_b,
        b.rounds as rounds_b
    from cell_pairs as p
    inner join picked as c
        on p.run = c.run and p.cell_a = c.cell and p.counting = c.policy
    inner join picked as b
        on
            p.run = b.run
            and p.cell_b = b.cell
            and p.base = b.policy
            and c.cell_game = b.cell_game
),

-- The pairs of cells that are not a paired comparison.
candidates as (
    select c.*
    from twins as c
    anti join (
        select distinct run, ruleset, players, lineup, base_lineup, counting, base
        from paired_games
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

-- Both policies in one cell: each game of the cell with each side's (wins, seats, points,
-- rounds) there, zeros for a side that did not sit (read for these cells only).
sides as (
    select
        k.run,
        k.variant,
        k.ruleset,
        k.players,
        k.lineup,
        k.base_lineup,
        k.counting,
        k.base,
        g.game,
        coalesce(sum(g.seats) filter (g.policy = k.counting), 0) as seats_c,
        coalesce(sum(g.wins) filter (g.policy = k.counting), 0) as wins_c,
        coalesce(sum(g.points) filter (g.policy = k.counting), 0) as points_c,
        coalesce(sum(g.rounds) filter (g.policy = k.counting), 0) as rounds_c,
        coalesce(sum(g.seats) filter (g.policy = k.base), 0) as seats_b,
        coalesce(sum(g.wins) filter (g.policy = k.base), 0) as wins_b,
        coalesce(sum(g.points) filter (g.policy = k.base), 0) as points_b,
        coalesce(sum(g.rounds) filter (g.policy = k.base), 0) as rounds_b
    from same_cell as k
    inner join picked as g
        on g.run = k.run and g.cell = k.cell_c and g.policy in (k.counting, k.base)
    group by all
),

-- Clusters shared by both sides: the pairs of a paired comparison, or the games of the one
-- cell both policies sit in.
shared_games as (
    select * from paired_games
    union all by name
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        base_lineup,
        counting,
        base,
        'unpaired' as method,
        game as cluster,
        wins_c,
        seats_c,
        points_c,
        rounds_c,
        wins_b,
        seats_b,
        points_b,
        rounds_b
    from sides
),

-- Each cluster's linearised difference d = z_c - z_b, z = R + (y - R n) / (Sn / G).
linearised as (
    select
        *,
        sum(wins_c) over k / sum(seats_c) over k
        + (wins_c - sum(wins_c) over k / sum(seats_c) over k * seats_c)
        / (sum(seats_c) over k / count(*) over k)
        - sum(wins_b) over k / sum(seats_b) over k
        - (wins_b - sum(wins_b) over k / sum(seats_b) over k * seats_b)
        / (sum(seats_b) over k / count(*) over k)
            as d_win,
        sum(points_c) over k / sum(rounds_c) over k
        + (points_c - sum(points_c) over k / sum(rounds_c) over k * rounds_c)
        / (sum(rounds_c) over k / count(*) over k)
        - sum(points_b) over k / sum(rounds_b) over k
        - (points_b - sum(points_b) over k / sum(rounds_b) over k * rounds_b)
        / (sum(rounds_b) over k / count(*) over k)
            as d_ppr
    from shared_games
    window k as (
        partition by run, variant, ruleset, players, lineup, base_lineup, counting, base, method
    )
),

one_set as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        base_lineup,
        counting,
        base,
        method,
        case when method = 'paired' then count(*) end as pairs,
        count(*) as games,
        case when method = 'paired' then count(*) else cast(sum(seats_c) as bigint) end
            as n_counting,
        case when method = 'paired' then count(*) else cast(sum(seats_b) as bigint) end
            as n_base,
        sum(points_c) / sum(rounds_c) as ppr_counting,
        sum(points_b) / sum(rounds_b) as ppr_base,
        sum(points_c) / sum(rounds_c) - sum(points_b) / sum(rounds_b) as ppr_gain,
        clustered_half(d_ppr, 1) / 1.959963984540054 as ppr_gain_se,
        sum(wins_c) / sum(seats_c) as win_counting,
        sum(wins_b) / sum(seats_b) as win_base,
        sum(wins_c) / sum(seats_c) - sum(wins_b) / sum(seats_b) as win_gain,
        clustered_half(d_win, 1) / 1.959963984540054 as win_gain_se
    from linearised
    group by run, variant, ruleset, players, lineup, base_lineup, counting, base, method
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
