-- scope: shard
-- only where: policies_differ
-- Every rounds row names the policy the games table seats there (labels swapped between seats
-- in one table only would otherwise flip per-round rates; the games table's labels are bound
-- to the manifest by assert_lineups_match_manifest).
-- Row by row only in the games whose (seat, policy) fingerprints differ
-- (int_games_compared.policies_differ).
with suspects as (
    select run, game from int_games_compared where policies_differ
),

games as (
    select run, shard, game, seat, policy from stg_games
    semi join suspects using (run, game)
),

rounds as (
    select run, game, seat, policy from stg_rounds
    semi join suspects using (run, game)
),

mismatched as (
    select g.run, g.shard, g.game, g.seat, r.policy as round_policy, g.policy as game_policy, count(*) as rounds
    from rounds as r
    inner join games as g on r.run = g.run and r.game = g.game and r.seat = g.seat
    where r.policy <> g.policy
    group by all
)

select
    run,
    shard,
    game,
    seat,
    format('seat {} plays {} in {} rounds rows, {} in the games table', seat, round_policy, rounds, game_policy) as problem
from mismatched
