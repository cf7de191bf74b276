-- Every player's round rebuilt from the event log alone (the rule of flip7.events.rebuild_scores):
-- the number cards in the drawer's row (a duplicate either busts or is cancelled by SC_USED, so
-- an unbusted row holds each drawn number once: their sum is the sum of the distinct numbers
-- drawn), times 2 with an x2, plus the +N modifiers and the FLIP7 bonus the event carries
-- (int_event_groups.extra); BUST scores 0. Also the status at round end (BUST 3, FREEZE 2,
-- STAY 1, else 0), whether the seat dealt (ROUND_START names the dealer) and, in the game's
-- last round, whether GAME_END names the seat the winner (`won`) and the total it names.
-- Vengeance games take their score from int_vengeance_rounds (a FORCED_STAY also means
-- stayed). A game's shard is in int_games_from_events. The events hold no ROUND_SCORE (the
-- files leave it to the rounds table): the rebuilt score is compared with the rounds table's.
-- Seat -1 rows are not rounds of a seat: each holds a round's events about nobody, with
-- round_end and round_cap (ROUND_END, ROUND_CAP); its other columns mean nothing. They are here
-- so that int_games_from_events reads the event groups once; the row-by-row tests leave them
-- out (seat >= 0).
-- The sum of the numbers 1..13 whose bits are set in `cards` is taken bit plane by bit plane:
-- 2^j times how many of them have bit j set (10922 = the odd numbers' bits, 3276 those with
-- bit 1, 12528 bit 2, 16128 bit 3).
-- materialized: view
with groups as (
    select * from int_event_groups
),

vengeance as (
    select run as v_run, game as v_game, round as v_round, seat as v_seat, score as v_score
    from int_vengeance_rounds
),

final as (
    select
        run,
        game,
        round,
        player as seat,
        case
            when v_seat is not null then v_score
            when kinds & (1 << 12) <> 0 then 0
            else
                (
                    bit_count(cards & 10922)::integer + 2 * bit_count(cards & 3276)
                    + 4 * bit_count(cards & 12528) + 8 * bit_count(cards & 16128)
                ) * (case when cards & (1 << 19) <> 0 then 2 else 1 end)
                + coalesce(extra, 0)
        end as score,
        kinds & (1 << 12) <> 0 as busted,
        kinds & (1 << 13) <> 0 as flip7,
        case
            when kinds & (1 << 12) <> 0 then 3
            when kinds & (1 << 7) <> 0 then 2
            when kinds & (1 << 3) <> 0 or kinds & (1 << 22) <> 0 then 1
            else 0
        end as status,
        kinds & 1 <> 0 as dealt,
        kinds & (1 << 18) <> 0 as won,
        game_end_value,
        kinds & (1 << 16) <> 0 as round_end,
        kinds & (1 << 17) <> 0 as round_cap
    from groups
    left join vengeance
        on run = v_run and game = v_game and round = v_round and player = v_seat
)

select * from final
