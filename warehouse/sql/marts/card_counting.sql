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
with results as (
    select * from stg_games
),

cells as (
    select * from int_cells
),

policy_games as (
    select * from fct_policy_games
),

-- Which policies each cell seats, from the shards' rollups (no scan of the games).
cell_policies as (
    select run, variant, ruleset, players, lineup, cell, policy
    from int_cell_rollups
    where grouping = 'policy' and figure = 'win'
),

policies as (
    select distinct
        policy,
        regexp_replace(policy, '^([A-Za-z_][A-Za-z0-9_]*)c(:|$)', '\1\2') as twin
    from cell_policies
),

-- The cells that seat a counting policy or the twin of one: only their games can make a pair
-- below, so only their seats go into the self-join (in a run without counting, none: then no
-- games are read at all).
counting_cells as (
    select distinct
        r.run,
        r.cell
    from cell_policies as r
    semi join (
        select policy from policies where policy <> twin
        union
        select twin from policies where policy <> twin
    ) as p on r.policy = p.policy
),

seats as (
    select
        r.run,
        r.players,
        r.pair,
        r.cell_game,
        r.seed,
        r.cell,
        r.seat,
        r.policy,
        p.twin
    from results as r
    inner join policies as p on r.policy = p.policy
    semi join counting_cells as c on r.run = c.run and r.cell = c.cell
),

matched as (
    select
        a.run,
        a.players,
        a.pair,
        a.cell_game,
        a.cell as cell_a,
        b.cell as cell_b,
        a.policy as policy_a,
        b.policy as policy_b,
        a.policy <> b.policy as differ,
        a.policy <> b.policy and a.twin = b.policy as swap
    from seats as a
    inner join seats as b
        on
            a.seed = b.seed
            and a.seat = b.seat
            and a.run = b.run
            and a.players = b.players
            and a.pair = b.pair
            and a.cell_game = b.cell_game
            and a.cell <> b.cell
),

-- One row per CRN pair of games whose seats differ only by swaps of the twin for the counting
-- policy (one counting policy).
game_pairs as (
    select
        run,
        players,
        cell_game,
        cell_a,
        cell_b,
        min(policy_a) filter (swap) as counting,
        min(policy_b) filter (swap) as base
    from matched
    group by run, players, pair, cell_game, cell_a, cell_b
    having
        count(*) filter (swap) > 0
        and count(*) filter (swap) = count(*) filter (differ)
        and min(policy_a) filter (swap) = max(policy_a) filter (swap)
),

-- Each pair with the counting policy's (wins, seats, points, rounds) in its game and the
-- twin's in the other: all their seats there, as fct_policy_games counts them for the cells'
-- own figures. The pairs' cells by label (cells are labelled after the pairing: a label per
-- pair of games would be a join per seat).
paired_games as (
    select
        g.run,
        a.variant,
        a.ruleset,
        g.players,
        a.lineup,
        b.lineup as base_lineup,
        g.counting,
        g.base,
        'paired' as method,
        g.cell_game as cluster,
        pc.wins as wins_c,
        pc.seats as seats_c,
        pc.points as points_c,
        pc.rounds as rounds_c,
        pb.wins as wins_b,
        pb.seats as seats_b,
        pb.points as points_b,
        pb.rounds as rounds_b
    from game_pairs as g
    inner join cells as a on g.run = a.run and g.cell_a = a.cell
    inner join cells as b on g.run = b.run and g.cell_b = b.cell
    inner join policy_games as pc
        on
            g.run = pc.run
            and g.cell_a = pc.cell
            and g.cell_game = pc.cell_game
            and g.counting = pc.policy
    inner join policy_games as pb
        on
            g.run = pb.run
            and g.cell_b = pb.cell
            and g.cell_game = pb.cell_game
            and g.base = pb.policy
    where a.ruleset = b.ruleset and a.variant = b.variant
),

candidates as (
    select
        c.run,
        c.variant,
        c.ruleset,
        c.players,
        c.lineup,
        b.lineup as base_lineup,
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
    anti join (
        select distinct run, ruleset, players, lineup, base_lineup, counting, base
        from paired_games
    ) as q
        on
            c.run = q.run
            and c.ruleset = q.ruleset
            and c.players = q.players
            and c.lineup = q.lineup
            and b.lineup = q.base_lineup
            and c.policy = q.counting
            and b.policy = q.base
),

-- Each game of either cell: the counting policy's side ('c') or the twin's ('b').
sides as (
    select
        k.*,
        'c' as side,
        g.game,
        g.wins,
        g.seats,
        g.points,
        g.rounds
    from candidates as k
    inner join policy_games as g
        on
            g.run = k.run
            and g.ruleset = k.ruleset
            and g.players = k.players
            and g.lineup = k.lineup
            and g.policy = k.counting
    union all
    select
        k.*,
        'b' as side,
        g.game,
        g.wins,
        g.seats,
        g.points,
        g.rounds
    from candidates as k
    inner join policy_games as g
        on
            g.run = k.run
            and g.ruleset = k.ruleset
            and g.players = k.players
            and g.lineup = k.base_lineup
            and g.policy = k.base
),

-- Two different cells: each side's figure and clustered half-width over its own games,
-- exactly as win_rates and points_per_round compute them (unclipped).
side_sums as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        base_lineup,
        counting,
        base,
        side,
        count(*) as games,
        sum(seats) as seats,
        sum(wins) / sum(seats) as win,
        clustered_half(wins, seats) as win_half,
        sum(points) / sum(rounds) as ppr,
        clustered_half(points, rounds) as ppr_half
    from sides
    where lineup <> base_lineup
    group by all
),

two_cells as (
    select
        c.run,
        c.variant,
        c.ruleset,
        c.players,
        c.lineup,
        c.base_lineup,
        c.counting,
        c.base,
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
    from side_sums as c
    inner join side_sums as b
        on
            c.run = b.run
            and c.variant = b.variant
            and c.ruleset = b.ruleset
            and c.players = b.players
            and c.lineup = b.lineup
            and c.base_lineup = b.base_lineup
            and c.counting = b.counting
            and c.base = b.base
    where c.side = 'c' and b.side = 'b'
),

-- Clusters shared by both sides: the pairs of a paired comparison, or the games of the one
-- cell both policies sit in (zeros for a policy that did not sit in a game).
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
        sum(case when side = 'c' then wins else 0 end) as wins_c,
        sum(case when side = 'c' then seats else 0 end) as seats_c,
        sum(case when side = 'c' then points else 0 end) as points_c,
        sum(case when side = 'c' then rounds else 0 end) as rounds_c,
        sum(case when side = 'b' then wins else 0 end) as wins_b,
        sum(case when side = 'b' then seats else 0 end) as seats_b,
        sum(case when side = 'b' then points else 0 end) as points_b,
        sum(case when side = 'b' then rounds else 0 end) as rounds_b
    from sides
    where lineup = base_lineup
    group by all
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
