-- "With a Vengeance" rounds rebuilt from the event log alone (the rule of
-- flip7.events.rebuild_vengeance_scores): a row is the multiset of cards that landed in it
-- (numbers by DRAW, modifiers by MODIFIER_GIVEN, CARD_MOVED in) less those that left it
-- (CARD_MOVED out, CARD_DISCARDED); its score is the numbers (0 with The Zero unless the seat
-- flipped 7), halved per /2 (rounded down), minus the -N cards, not below 0 unless Brutal, plus
-- the bonus the FLIP7 event carries, less any Brutal FLIP7_PENALTY; a bust scores 0 (Brutal:
-- minus the -N cards). One row per seat of every Vengeance game; none for classic games.
-- The FLIP7 bonus comes from this query's own scan of the Vengeance games' events (in
-- int_event_groups it is summed with the classic +N modifiers), read as stored
-- (event_elements over stg_event_games; the HITs folded into elements, the ROUND_SCOREs the
-- files leave out and the sequence numbers are not needed here). `events` is materialized:
-- five relations below read it, and inlined it would unnest the games' lists five times.
with games as (
    select run, game, any_value(variant like '%brutal=1%') as brutal
    from stg_games
    where variant like 'vengeance%'
    group by run, game
),

event_games as (
    select e.*
    from stg_event_games as e
    semi join games as g on e.run = g.run and e.game = g.game
),

events as materialized (
    select * from event_elements('event_games')
    where kind in (1, 13, 19, 20, 21, 23)
),

moves as (
    select run, game, round, player as seat, card, 1 as n
    from events where kind = 1 and (card between 0 and 13 or card in (23, 24))
    union all
    select run, game, round, target as seat, card, 1 as n from events where kind in (19, 20)
    union all
    select run, game, round, player as seat, card, -1 as n from events where kind in (20, 21)
),

rows as (
    select
        run,
        game,
        round,
        seat,
        sum(n * case when card <= 13 then card when card = 23 then 7 when card = 24 then 13 else 0 end) as numbers,
        coalesce(sum(n) filter (card = 0), 0) > 0 as zero,
        coalesce(sum(n) filter (card = 25), 0) as div2,
        coalesce(sum(n * (card - 25) * 2) filter (card between 26 and 30), 0) as minus
    from moves
    group by run, game, round, seat
),

penalties as (
    select run, game, round, target as seat, sum(value) as penalty
    from events where kind = 23
    group by run, game, round, target
),

bonuses as (
    select run, game, round, player as seat, max(value) as bonus
    from events where kind = 13
    group by run, game, round, player
),

seats as (
    select g.run, g.game, g.round, g.player as seat, g.kinds, games.brutal
    from int_event_groups as g
    join games on g.run = games.run and g.game = games.game
    where g.player >= 0
),

joined as (
    select
        s.run,
        s.game,
        s.round,
        s.seat,
        s.brutal,
        s.kinds & (1 << 12) <> 0 as busted,
        case when s.kinds & (1 << 13) <> 0 then b.bonus else 0 end as bonus,
        coalesce(r.minus, 0) as minus,
        (case
            when coalesce(r.zero, false) and s.kinds & (1 << 13) = 0 then 0
            else coalesce(r.numbers, 0)
        end) // (1::bigint << coalesce(r.div2, 0)::integer) - coalesce(r.minus, 0) as raw,
        coalesce(p.penalty, 0) as penalty
    from seats as s
    left join rows as r using (run, game, round, seat)
    left join penalties as p using (run, game, round, seat)
    left join bonuses as b using (run, game, round, seat)
),

final as (
    select
        run,
        game,
        round,
        seat,
        case
            when busted then (case when brutal then -minus else 0 end)
            when brutal then raw + bonus
            else greatest(raw, 0) + bonus
        end - penalty as score
    from joined
)

select * from final
