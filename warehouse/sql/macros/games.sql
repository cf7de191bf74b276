-- The game key, named once: (run, players, shard, game). A game number is unique within its
-- run; players and shard ride along because a query filters on them (they are the partition
-- directory and the file name), and a relation grouped by every id a query may filter on lets
-- that filter reach the files. A relation selects them with
-- `columns(lambda c: is_game_key(c))`, in the order the relation it reads holds them (the lake
-- tables' order: run, players, shard, game), and a per-game aggregate groups by all;
-- `is_round_key` adds the round.
create or replace macro is_game_key(c) as
    c in ('run', 'players', 'shard', 'game');
create or replace macro is_round_key(c) as
    is_game_key(c) or c = 'round';

-- How each policy's seats' rounds ended in each game of a relation with stg_rounds' columns
-- (its name: a view or a CTE of the caller): rounds played, busts, Flip 7s, stays and freezes,
-- one row per game key and policy. The clusters of the per-round rates (y = the game's busts
-- ... of the policy's seats, n = the rounds they played in it): fct_policy_game_rounds and
-- the rollups' definition (int_rollups_from_tables) count them alike.
create or replace macro policy_round_ends(relation) as table
    select
        columns(lambda c: is_game_key(c)),
        policy,
        count(*) as rounds,
        count(*) filter (busted) as busts,
        count(*) filter (flip7) as flip7s,
        count(*) filter (status = 1) as stays,
        count(*) filter (status = 2) as freezes
    from query_table(relation)
    group by all;

-- The shuffle a game was dealt, the cluster of figures pooled over runs (variant_comparison):
-- game g of a cell of a run with root seed `seed` plays derive_seed(seed, pair, g - game_offset)
-- (pipeline/plan.py), so runs that share a seed replay each other's shuffles; a run without a
-- manifest (no seed) only its own games: (run, game).
create or replace macro shuffle_of(seed, pair, game_offset, run, game) as {
    'seed': seed,
    'run': case when seed is null then run end,
    'pair': coalesce(pair, -1),
    'game': case when seed is null then game else game - game_offset end
};
