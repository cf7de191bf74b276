-- materialized: view
-- (Reads every games and rounds row: verify and upgrade run it a batch of shards at a time.)
-- The rollup of each shard (stg_rollups) rebuilt from its games and rounds files: the
-- definition the pipeline's compiled pass (pipeline/rollups.py) must agree with, row for row.
-- Each block below lists one grouping's clusters (one row per game and group, with its y and
-- n); `final` adds them up per shard and group. `verify` compares this with the stored rollups
-- (assert_rollups_match_tables); `flip7 warehouse upgrade` writes it for runs of older schemas.
with games as (
    select * from stg_games
),

rounds as (
    select
        *,
        -- the turn position in the round (0 acts first after the dealer), as fct_round_results
        cast((seat - dealer - 1 + 2 * players) % players as integer) as position
    from stg_rounds
),

shard_cells as (
    select
        run,
        players,
        shard,
        any_value(cell) as cell,
        any_value(variant) as variant,
        any_value(ruleset) as ruleset,
        arg_min(lineup, cell_game) as seating,
        min(cell_game) as first_game
    from games
    group by run, players, shard
),

policy_games as (
    select
        columns(lambda c: is_game_key(c)),
        policy,
        count(*) as seats,
        count(*) filter (winner) as wins,
        sum(total) as points,
        sum(rounds) as seat_rounds,
        sum(rank) as rank_sum
    from games
    group by all
),

policy_rounds as (
    select * from policy_round_ends('rounds')
),

game_totals as (
    select
        columns(lambda c: is_game_key(c)),
        any_value(rounds) as rounds,
        any_value(events) as events,
        sum(total) as points,
        sum(rounds) as seat_rounds
    from games
    group by all
),

game_round_ends as (
    select
        columns(lambda c: is_game_key(c)),
        count(*) filter (busted) as busts,
        count(*) filter (flip7) as flip7s
    from rounds
    group by all
),

positions as (
    select
        columns(lambda c: is_game_key(c)),
        position,
        coalesce(policy, '*') as policy,
        count(*) as rounds,
        sum(score) as points,
        count(*) filter (busted) as busts,
        count(*) filter (flip7) as flip7s
    from rounds
    group by grouping sets (
        (run, players, shard, game, position),
        (run, players, shard, game, position, policy)
    )
),

meetings as (
    select
        a.run,
        a.players,
        a.shard,
        a.game,
        a.policy,
        b.policy as opponent,
        count(*) as meetings,
        count(*) filter (a.rank < b.rank) as ahead,
        count(*) filter (a.rank > b.rank) as behind
    from games as a
    inner join games as b
        on a.run = b.run and a.shard = b.shard and a.game = b.game
        and a.seat <> b.seat and a.policy <> b.policy
    group by a.run, a.players, a.shard, a.game, a.policy, b.policy
),

-- Every cluster: (shard, grouping, policy, opponent, key, figure, y, n), one row per game and
-- figure. Each block lists a grouping's figures of a game as (figure, y, n) structs; one unnest
-- makes them rows.
clusters as (
    select * exclude (figures), unnest(figures, recursive := true)
    from (
        select run, players, shard, 'policy' as grouping, policy, '' as opponent, -1 as key, [
            {'figure': 'win', 'y': wins, 'n': seats},
            {'figure': 'points', 'y': points, 'n': seat_rounds},
            {'figure': 'rank', 'y': rank_sum, 'n': seats}
        ] as figures
        from policy_games
        union all
        select run, players, shard, 'policy', policy, '', -1, [
            {'figure': 'bust', 'y': busts, 'n': rounds},
            {'figure': 'flip7', 'y': flip7s, 'n': rounds},
            {'figure': 'stay', 'y': stays, 'n': rounds},
            {'figure': 'freeze', 'y': freezes, 'n': rounds}
        ]
        from policy_rounds
        union all
        select g.run, g.players, g.shard, 'cell', '*', '', -1, [
            {'figure': 'rounds', 'y': g.rounds, 'n': 1},
            {'figure': 'points', 'y': g.points, 'n': g.seat_rounds},
            {'figure': 'bust', 'y': e.busts, 'n': g.seat_rounds},
            {'figure': 'flip7', 'y': e.flip7s, 'n': g.seat_rounds},
            {'figure': 'events', 'y': g.events, 'n': 1}
        ]
        from game_totals as g
        inner join game_round_ends as e
            on g.run = e.run and g.shard = e.shard and g.game = e.game
        union all
        select run, players, shard, 'seat', pooled, '', seat, [
            {'figure': 'win', 'y': cast(winner as integer), 'n': 1},
            {'figure': 'points', 'y': total, 'n': rounds}
        ]
        from (select *, unnest([policy, '*']) as pooled from games)
        union all
        select run, players, shard, 'position', policy, '', position, [
            {'figure': 'points', 'y': points, 'n': rounds},
            {'figure': 'bust', 'y': busts, 'n': rounds},
            {'figure': 'flip7', 'y': flip7s, 'n': rounds}
        ]
        from positions
        union all
        select run, players, shard, 'versus', policy, opponent, -1, [
            {'figure': 'ahead', 'y': ahead, 'n': ahead + behind}
        ]
        from meetings
    )
),

sums as (
    select
        run,
        players,
        shard,
        grouping,
        figure,
        policy,
        opponent,
        key,
        count(*) as games,
        sum(y) as y,
        sum(n) as n,
        sum(y * y) as yy,
        sum(n * n) as nn,
        sum(y * n) as yn
    from clusters
    group by all
    union all
    -- meetings: y counts the meetings of two policies' seats; games the games they met in
    select
        run, players, shard, 'versus', 'meetings', policy, opponent, -1,
        count(*), sum(meetings), 0, 0, 0, 0
    from meetings
    group by all
    union all
    -- round scores: y (and games) count the rounds that scored `key`
    select
        run, players, shard, 'score', 'rounds', policy, '', score,
        count(*), count(*), 0, 0, 0, 0
    from rounds
    group by all
),

-- A policy's win and points y and n of each game it sat in, in game order (the lists the
-- card-counting mart pairs two cells' games with); every other row's lists are empty.
game_lists as (
    select
        run,
        shard,
        'policy' as grouping,
        figure,
        policy,
        list(y order by game) as game_y,
        list(n order by game) as game_n
    from (
        select
            run, shard, game, policy,
            unnest([
                {'figure': 'win', 'y': wins, 'n': seats},
                {'figure': 'points', 'y': points, 'n': seat_rounds}
            ], recursive := true)
        from policy_games
    )
    group by run, shard, figure, policy
),

final as (
    select
        s.run,
        s.players,
        s.shard,
        c.cell,
        c.variant,
        c.ruleset,
        c.seating,
        cast(c.first_game as integer) as first_game,
        s.grouping,
        s.figure,
        s.policy,
        s.opponent,
        cast(s.key as integer) as key,
        cast(s.games as bigint) as games,
        cast(s.y as bigint) as y,
        cast(s.n as bigint) as n,
        cast(s.yy as bigint) as yy,
        cast(s.nn as bigint) as nn,
        cast(s.yn as bigint) as yn,
        cast(coalesce(l.game_y, []) as bigint []) as game_y,
        cast(coalesce(l.game_n, []) as bigint []) as game_n
    from sums as s
    inner join shard_cells as c using (run, shard)
    left join game_lists as l using (run, shard, grouping, figure, policy)
)

select * from final
