-- The gain from counting cards: each counting policy against its non-counting twin (a policy
-- named like another plus 'c': evc/ev, bustc:P/bust:P), per run and field size, in points per
-- round and in win rate, with standard errors and 95% intervals.
--
-- method 'paired' (common random numbers): games with equal (run, pair, cell_game), hence
-- equal seeds, but different cells saw the same shuffles. Where two such cells differ only in
-- seats that swap the twin for the counting policy, the unit is that pair of games: d = the
-- counting seats' mean minus the twin seats' mean (the game's points per round, and wins), and
-- se = sd(d) / sqrt(pairs). Otherwise method 'unpaired': the counting policy's pooled points
-- per round and win rate minus the twin's in the same run and field size (from the
-- points_per_round and win_rates marts), independent errors added in quadrature.
with results as (
    select * from fct_game_results
),

policies as (
    select distinct
        policy,
        regexp_replace(policy, '^([A-Za-z_][A-Za-z0-9_]*)c(:|$)', '\1\2') as twin
    from results
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
        r.points_per_round as ppr
    from results as r
    inner join policies as p on r.policy = p.policy
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

game_pairs as (
    select
        run,
        players,
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

paired as (
    select
        run,
        players,
        counting,
        base,
        'paired' as method,
        count(*) as pairs,
        count(*) as n_counting,
        count(*) as n_base,
        avg(ppr_a) as ppr_counting,
        avg(ppr_b) as ppr_base,
        avg(ppr_a - ppr_b) as ppr_gain,
        stddev_samp(ppr_a - ppr_b) / sqrt(count(*)) as ppr_gain_se,
        avg(win_a) as win_counting,
        avg(win_b) as win_base,
        avg(win_a - win_b) as win_gain,
        stddev_samp(win_a - win_b) / sqrt(count(*)) as win_gain_se
    from game_pairs
    group by run, players, counting, base
),

unpaired as (
    select
        c.run,
        c.players,
        c.policy as counting,
        b.policy as base,
        'unpaired' as method,
        cast(null as bigint) as pairs,
        cw.player_games as n_counting,
        bw.player_games as n_base,
        c.points_per_round as ppr_counting,
        b.points_per_round as ppr_base,
        c.points_per_round - b.points_per_round as ppr_gain,
        sqrt(c.se ** 2 + b.se ** 2) as ppr_gain_se,
        cw.win_rate as win_counting,
        bw.win_rate as win_base,
        cw.win_rate - bw.win_rate as win_gain,
        sqrt(
            cw.win_rate * (1 - cw.win_rate) / cw.player_games
            + bw.win_rate * (1 - bw.win_rate) / bw.player_games
        ) as win_gain_se
    from points_per_round as c
    inner join policies as p on c.policy = p.policy
    inner join points_per_round as b
        on c.run = b.run and c.players = b.players and c.policy <> b.policy and p.twin = b.policy
    inner join win_rates as cw on c.run = cw.run and c.players = cw.players and c.policy = cw.policy
    inner join win_rates as bw on b.run = bw.run and b.players = bw.players and b.policy = bw.policy
    anti join paired as q
        on c.run = q.run and c.players = q.players and c.policy = q.counting and b.policy = q.base
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
