-- scope: marts
-- The marts hang together: every rate lies in [0, 1] inside its interval (where it has one:
-- one game has none), each field size's
-- wins add up to its games, shares of the round-score distribution add up to 1, and head to
-- head counts are symmetric.
with rate_problems as (
    select run, format('win_rates {} {}p {}: rate {} not within [{}, {}]', policy, players, lineup, win_rate, win_rate_lo, win_rate_hi) as problem
    from win_rates
    where not (0 <= win_rate_lo and win_rate_lo <= win_rate and win_rate <= win_rate_hi and win_rate_hi <= 1)
    union all
    select run, format('round_rates {} {}p {}: a rate is outside its interval', policy, players, lineup)
    from round_rates
    where not (
        bust_rate_lo <= bust_rate and bust_rate <= bust_rate_hi
        and flip7_rate_lo <= flip7_rate and flip7_rate <= flip7_rate_hi
        and bust_rate + flip7_rate + stay_rate + freeze_rate <= 1 + 1e-9
    )
),

win_totals as (
    select w.run, w.players, sum(w.wins) as wins, any_value(g.games) as games
    from win_rates as w
    inner join (select run, players, count(*) as games from fct_games group by run, players) as g
        on w.run = g.run and w.players = g.players
    group by w.run, w.players
),

share_totals as (
    select run, players, lineup, policy, sum(share) as share
    from round_distribution
    group by run, players, lineup, policy
),

lopsided as (
    select a.run, format('head_to_head {} vs {}: {} ahead, but {} behind the other way', a.policy, a.opponent, a.ahead, b.behind) as problem
    from head_to_head as a
    inner join head_to_head as b
        on a.run = b.run and a.players = b.players and a.lineup = b.lineup
        and a.policy = b.opponent and a.opponent = b.policy
    where a.ahead <> b.behind or a.meetings <> b.meetings
)

select * from rate_problems
union all
select run, format('{}p: {} wins over {} games', players, wins, games) from win_totals where wins <> games
union all
select run, format('round_distribution {} {}p: shares add up to {}', policy, players, share) from share_totals where abs(share - 1) > 1e-9
union all
select * from lopsided
