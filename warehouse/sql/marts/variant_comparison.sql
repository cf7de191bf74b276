-- How the variant changes the game: per cell without its run and policy, pooled over every run
-- that played that cell (the same line-up at the same table under the same rules:
-- replications, not a blend), the points per round, the bust and Flip 7 rates and the win
-- index (win rate x n), each with its 95% interval and its sample size. A cell here is what
-- was played: variant, ruleset, field size, the line-up's label AND its seating (its policies
-- in seat order, int_cells): two runs that give one label to different line-ups are two rows,
-- never pooled. Line-ups named and seated alike in a classic and a "With a Vengeance" run
-- compare row for row.
--
-- Runs that share a root seed replay the same shuffles: game i of a cell gets
-- derive_seed(root seed, pair, i) (pipeline/plan.py), so two such runs playing one cell play
-- the same games, not independent ones. Every game stays in the figures, but the cluster is the
-- shuffle (root seed, pair, game in the cell; a run without a manifest: its own game), not the
-- game: `shuffles` counts the clusters, fewer than `games` when some runs replayed others'
-- games, and the intervals are clustered by shuffle (the win index's not clipped).
-- `pooled_runs` names the runs pooled.
with policy_games as (
    select * from fct_policy_games
),

policy_rounds as (
    select * from fct_policy_game_rounds
),

cells as (
    select * from int_cells
),

manifest_cells as (
    select * from stg_manifest_cells
),

manifests as (
    select * from stg_manifests
),

-- Each cell of each run with the cell without its run (`cell_key`, a number for variant,
-- ruleset, field size, label and seating: what the sums below group by) and what fixes its
-- games' shuffles (shuffle_of: game g of the cell is shuffle (seed, pair, g - game_offset)).
cell_shuffles as (
    select
        c.*,
        dense_rank() over (order by c.variant, c.ruleset, c.players, c.lineup, c.seating)
            as cell_key,
        m.seed,
        mc.pair,
        mc.game_offset
    from cells as c
    left join manifest_cells as mc using (run, cell)
    left join manifests as m using (run)
),

-- Each cell without its run, with the runs that played it (a label names one seating per field
-- size and ruleset in a run).
cell_runs as (
    select
        cell_key,
        any_value(variant) as variant,
        any_value(ruleset) as ruleset,
        any_value(players) as players,
        any_value(lineup) as lineup,
        any_value(seating) as seating,
        count(*) as runs,
        list(run order by run) as pooled_runs
    from cell_shuffles
    group by cell_key
),

-- One row per cell, policy and shuffle: the games played on it (one, unless runs share a seed).
-- Each source summed on its own (a join of the two per-game relations would be as big as the
-- games table); the two small results join on the cell and policy.
game_shuffles as (
    select
        s.cell_key,
        g.players,
        g.policy,
        shuffle_of(s.seed, s.pair, s.game_offset, g.run, g.game) as shuffle,
        count(*) as games,
        sum(g.seats) as seats,
        sum(g.wins) as wins,
        sum(g.rounds) as rounds,
        sum(g.points) as points
    from policy_games as g
    inner join cell_shuffles as s using (run, cell)
    group by all
),

round_shuffles as (
    select
        s.cell_key,
        r.policy,
        shuffle_of(s.seed, s.pair, s.game_offset, r.run, r.game) as shuffle,
        sum(r.rounds) as rounds,
        sum(r.busts) as busts,
        sum(r.flip7s) as flip7s
    from policy_rounds as r
    inner join cell_shuffles as s using (run, cell)
    group by all
),

games_pooled as (
    select
        cell_key,
        policy,
        cast(sum(games) as bigint) as games,
        count(*) as shuffles,
        cast(sum(seats) as bigint) as player_games,
        cast(sum(wins) as bigint) as wins,
        clustered_index(wins, seats, players) as win_index,
        clustered_index_lo(wins, seats, players) as win_index_lo,
        clustered_index_hi(wins, seats, players) as win_index_hi,
        cast(sum(rounds) as bigint) as rounds,
        cast(sum(points) as bigint) as points,
        clustered_lo(points, rounds) as ppr_lo,
        clustered_hi(points, rounds) as ppr_hi
    from game_shuffles
    group by cell_key, policy
),

rounds_pooled as (
    select
        cell_key,
        policy,
        cast(sum(busts) as bigint) as busts,
        clustered_rate_lo(busts, rounds) as bust_rate_lo,
        clustered_rate_hi(busts, rounds) as bust_rate_hi,
        cast(sum(flip7s) as bigint) as flip7s,
        clustered_rate_lo(flip7s, rounds) as flip7_rate_lo,
        clustered_rate_hi(flip7s, rounds) as flip7_rate_hi
    from round_shuffles
    group by cell_key, policy
),

final as (
    select
        variant,
        ruleset,
        players,
        lineup,
        seating,
        policy,
        runs,
        pooled_runs,
        games,
        shuffles,
        player_games,
        wins,
        win_index,
        win_index_lo,
        win_index_hi,
        rounds,
        points / rounds as points_per_round,
        ppr_lo,
        ppr_hi,
        busts / rounds as bust_rate,
        bust_rate_lo,
        bust_rate_hi,
        flip7s / rounds as flip7_rate,
        flip7_rate_lo,
        flip7_rate_hi
    from games_pooled
    inner join rounds_pooled using (cell_key, policy)
    inner join cell_runs using (cell_key)
)

select * from final
-- a stable order: the row's keys come first, so `FROM mart` lists it the same way every time
order by all
