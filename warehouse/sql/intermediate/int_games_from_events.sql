-- Every game summarised from the event log alone: how many events and rounds, whether the
-- sequence numbers run 0..n-1 (count, bounds and sum), the round markers, and the winner and
-- winning total that GAME_END names.
with groups as (
    select * from int_event_groups
),

final as (
    select
        run,
        players,
        shard,
        game,
        sum(events) as events,
        min(first_seq) as first_seq,
        max(last_seq) as last_seq,
        sum(seq_sum) as seq_sum,
        max(round) as rounds,
        count(*) filter (kinds & 1 <> 0) as round_starts,
        count(*) filter (kinds & (1 << 16) <> 0) as round_ends,
        count(*) filter (kinds & (1 << 17) <> 0) as round_caps,
        count(*) filter (kinds & (1 << 18) <> 0) as game_ends,
        max(player) filter (kinds & (1 << 18) <> 0) as winner,
        max(game_end_value) as winner_total
    from groups
    group by run, players, shard, game
)

select * from final
