-- The gain from counting cards: each counting policy against its non-counting twin (a policy
-- named like another plus 'c': evc/ev, bustc:P/bust:P), in points per round (pooled: points /
-- rounds) and in win rate (wins / seats). A row names the counting policy's cell (`lineup`)
-- and the twin's (`base_lineup`) in one run, variant, ruleset and field size: a twin is never
-- taken from a cell played under other rules.
--
-- method 'paired' (common random numbers): games with equal (run, pair, cell_game), hence
-- equal seeds, but different cells saw the same shuffles. Where two such cells differ only in
-- seats that swap the twin for the counting policy, the cluster is that pair of games: y = the
-- counting seats' figure minus the twin seats' figure in the pair's two games, n = 1, so the
-- gain is the mean difference and its 95% interval the clustered one over pairs
-- (clustered_* macros; se = sd / sqrt(pairs)).
--
-- method 'unpaired' (every other counting/twin pair of cells, the same cell included): the
-- counting policy's ratio minus the twin's, R_c - R_b, with the delta-method variance
-- clustered by game over the games of both cells: e_g = (y_cg - R_c n_cg) / Sn_c -
-- (y_bg - R_b n_bg) / Sn_b (zero terms where a policy did not sit), var = G / (G - 1) sum e_g^2.
-- For two different cells (disjoint games) this is the two clustered variances added; for one
-- cell it keeps the covariance of sharing the table.
with results as (
    select * from stg_games
),

cells as (
    select * from int_cells
),

policy_games as (
    select * from fct_policy_games
),

policies as (
    select distinct
        policy,
        regexp_replace(policy, '^([A-Za-z_][A-Za-z0-9_]*)c(:|$)', '\1\2') as twin
    from results
),

-- The cells that seat a counting policy or the twin of one: only their games can make a pair
-- below, so only their seats go into the self-join (in a run without counting, none).
counting_cells as (
    select distinct
        r.run,
        r.cell
    from results as r
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
        p.twin,
        cast(r.winner as integer) as win,
        r.total / r.rounds as ppr
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
        a.policy <> b.policy and a.twin = b.policy as swap,
        a.ppr as ppr_a,
        b.ppr as ppr_b,
        a.win as win_a,
        b.win as win_b
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

-- One row per CRN pair of games: the counting seats' figures and the twin seats'.
game_pairs as (
    select
        run,
        players,
        cell_a,
        cell_b,
        min(policy_a) filter (swap) as counting,
        min(policy_b) filter (swap) as base,
        avg(ppr_a) filter (swap) as ppr_a,
        avg(ppr_b) filter (swap) as ppr_b,
        avg(win_a) filter (swap) as win_a,
        avg(win_b) filter (swap) as win_b
    from matched
    group by run, players, pair, cell_game, cell_a, cell_b
    having
        count(*) filter (swap) > 0
        and count(*) filter (swap) = count(*) filter (differ)
        and min(policy_a) filter (swap) = max(policy_a) filter (swap)
),

-- The pairs' cells by label (cells are labelled after the pairing: a label per pair of games
-- would be a join per seat).
labelled_pairs as (
    select
        g.*,
        a.variant,
        a.ruleset,
        a.lineup,
        b.lineup as base_lineup
    from game_pairs as g
    inner join cells as a on g.run = a.run and g.cell_a = a.cell
    inner join cells as b on g.run = b.run and g.cell_b = b.cell
    where a.ruleset = b.ruleset and a.variant = b.variant
),

paired as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        base_lineup,
        counting,
        base,
        'paired' as method,
        count(*) as pairs,
        count(*) as games,
        count(*) as n_counting,
        count(*) as n_base,
        avg(ppr_a) as ppr_counting,
        avg(ppr_b) as ppr_base,
        avg(ppr_a - ppr_b) as ppr_gain,
        clustered_half(ppr_a - ppr_b, 1) / 1.959963984540054 as ppr_gain_se,
        avg(win_a) as win_counting,
        avg(win_b) as win_base,
        avg(win_a - win_b) as win_gain,
        clustered_half(win_a - win_b, 1) / 1.959963984540054 as win_gain_se
    from labelled_pairs
    group by run, variant, ruleset, players, lineup, base_lineup, counting, base
),

cell_policies as (
    select distinct run, variant, ruleset, players, lineup, policy from policy_games
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
    anti join paired as q
        on
            c.run = q.run
            and c.ruleset = q.ruleset
            and c.players = q.players
            and c.lineup = q.lineup
            and b.lineup = q.base_lineup
            and c.policy = q.counting
            and b.policy = q.base
),

-- Each game of either cell: the counting policy's (wins, seats, points, rounds) and the twin's.
sides as (
    select
        k.*,
        g.game,
        g.wins as wins_c,
        g.seats as seats_c,
        g.points as points_c,
        g.rounds as rounds_c,
        0 as wins_b,
        0 as seats_b,
        0 as points_b,
        0 as rounds_b
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
        g.game,
        0,
        0,
        0,
        0,
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

unpaired_games as (
    select
        run,
        variant,
        ruleset,
        players,
        lineup,
        base_lineup,
        counting,
        base,
        game,
        sum(wins_c) as wins_c,
        sum(seats_c) as seats_c,
        sum(points_c) as points_c,
        sum(rounds_c) as rounds_c,
        sum(wins_b) as wins_b,
        sum(seats_b) as seats_b,
        sum(points_b) as points_b,
        sum(rounds_b) as rounds_b
    from sides
    group by run, variant, ruleset, players, lineup, base_lineup, counting, base, game
),

residuals as (
    select
        *,
        (wins_c - sum(wins_c) over k / sum(seats_c) over k * seats_c) / sum(seats_c) over k
        - (wins_b - sum(wins_b) over k / sum(seats_b) over k * seats_b) / sum(seats_b) over k
            as e_win,
        (points_c - sum(points_c) over k / sum(rounds_c) over k * rounds_c) / sum(rounds_c) over k
        - (points_b - sum(points_b) over k / sum(rounds_b) over k * rounds_b) / sum(rounds_b) over k
            as e_ppr
    from unpaired_games
    window k as (partition by run, variant, ruleset, players, lineup, base_lineup, counting, base)
),

unpaired as (
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
        cast(null as bigint) as pairs,
        count(*) as games,
        cast(sum(seats_c) as bigint) as n_counting,
        cast(sum(seats_b) as bigint) as n_base,
        sum(points_c) / sum(rounds_c) as ppr_counting,
        sum(points_b) / sum(rounds_b) as ppr_base,
        sum(points_c) / sum(rounds_c) - sum(points_b) / sum(rounds_b) as ppr_gain,
        case when count(*) >= 2 then sqrt(cast(count(*) as double) / (count(*) - 1) * sum(e_ppr * e_ppr)) end
            as ppr_gain_se,
        sum(wins_c) / sum(seats_c) as win_counting,
        sum(wins_b) / sum(seats_b) as win_base,
        sum(wins_c) / sum(seats_c) - sum(wins_b) / sum(seats_b) as win_gain,
        case when count(*) >= 2 then sqrt(cast(count(*) as double) / (count(*) - 1) * sum(e_win * e_win)) end
            as win_gain_se
    from residuals
    group by run, variant, ruleset, players, lineup, base_lineup, counting, base
),

final as (
    select
        *,
        ppr_gain - 1.959963984540054 * ppr_gain_se as ppr_gain_lo,
        ppr_gain + 1.959963984540054 * ppr_gain_se as ppr_gain_hi,
        win_gain - 1.959963984540054 * win_gain_se as win_gain_lo,
        win_gain + 1.959963984540054 * win_gain_se as win_gain_hi
    from (
        select * from paired
        union all by name
        select * from unpaired
    )
)

select * from final
