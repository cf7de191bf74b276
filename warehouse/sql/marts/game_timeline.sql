-- materialized: view
-- One logged game card by card, for a replay: every event in order (seq) with its round, kind
-- and card by name, who it concerns and their policy, the receiver of an action or Second
-- Chance, and how a card was drawn. Filter on run and game: the scan is pruned to that game.
with events as (
    select * from stg_events
),

seats as (
    select run, game, seat, policy from stg_games
),

final as (
    select
        e.run,
        e.players,
        e.game,
        e.seq,
        e.round,
        e.kind,
        event_kind_name(e.kind) as kind_name,
        e.player,
        p.policy as player_policy,
        e.card,
        card_label(e.card) as card_label,
        e.target,
        t.policy as target_policy,
        e.value,
        case when e.kind = 1 then draw_how_name(e.value) end as draw_how
    from events as e
    left join seats as p on e.run = p.run and e.game = p.game and e.player = p.seat
    left join seats as t on e.run = t.run and e.game = t.game and e.target = t.seat
)

select * from final
