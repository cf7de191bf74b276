-- The statistics contract (flip7/stats.py, docs/warehouse.md): a figure is a ratio of two sums
-- over clusters (games; for a paired comparison, pairs of games on the same shuffles), and its
-- 95% interval is the delta-method variance of sum(y) / sum(n) clustered by game, with the
-- G / (G - 1) small-sample factor. From G clusters and the sums of y, n, y^2, n^2 and y*n:
--
--     R = Sy / Sn
--     var(R) = G / (G - 1) * (Syy - 2 R Syn + R^2 Snn) / Sn^2
--     R +- 1.959963984540054 * sqrt(var(R))
--
-- NULL under 2 clusters (never zero). The `cluster_ratio_*` macros take the six sums (they add
-- across shards, runs and SQL groups); the `clustered_*` forms are aggregates over rows that
-- are ONE ROW PER CLUSTER, (y, n) each. `*_rate_*` clip to [0, 1] (win, bust, Flip 7 ... rates);
-- means such as points per round, differences and the win index (`clustered_index_*`, below)
-- are not clipped. A test binds these macros to
-- flip7.stats.cluster_ratio on the same data (tests/warehouse/test_stats_macros.py).
create or replace macro cluster_ratio_half(g, sy, sn, syy, snn, syn) as
    case when g >= 2 and sn <> 0 then
        1.959963984540054 * sqrt(
            cast(g as double) / (g - 1)
            * greatest(
                cast(syy as double)
                - 2.0 * (cast(sy as double) / sn) * syn
                + (cast(sy as double) / sn) * (cast(sy as double) / sn) * snn,
                0.0
            )
            / (cast(sn as double) * sn)
        )
    end;

create or replace macro cluster_ratio_lo(g, sy, sn, syy, snn, syn) as
    cast(sy as double) / nullif(sn, 0) - cluster_ratio_half(g, sy, sn, syy, snn, syn);

create or replace macro cluster_ratio_hi(g, sy, sn, syy, snn, syn) as
    cast(sy as double) / nullif(sn, 0) + cluster_ratio_half(g, sy, sn, syy, snn, syn);

-- greatest/least skip NULLs in DuckDB, so an undefined interval is kept NULL explicitly. A
-- rate of exactly 0 or 1 (no event, or every one, in all g games) has no spread: its interval
-- is the exact bound for no event in sn trials (each seat or round one), [0, 1 - 0.025^(1/sn)]
-- or [0.025^(1/sn), 1] (flip7.stats), not [0, 0] or [1, 1].
create or replace macro cluster_rate_lo(g, sy, sn, syy, snn, syn) as
    case
        when cluster_ratio_half(g, sy, sn, syy, snn, syn) is null then null
        when sy = 0 then 0.0
        when sy = sn then pow(0.025, 1.0 / sn)
        else greatest(cluster_ratio_lo(g, sy, sn, syy, snn, syn), 0.0)
    end;

create or replace macro cluster_rate_hi(g, sy, sn, syy, snn, syn) as
    case
        when cluster_ratio_half(g, sy, sn, syy, snn, syn) is null then null
        when sy = 0 then 1.0 - pow(0.025, 1.0 / sn)
        when sy = sn then 1.0
        else least(cluster_ratio_hi(g, sy, sn, syy, snn, syn), 1.0)
    end;

-- One bound of the interval from the six sums, by name: 'half' (the half-width), 'lo' and 'hi'
-- (the ratio's, not clipped), 'rate_lo' and 'rate_hi' (clipped to [0, 1]). The optimizer
-- folds the constant name away: what runs is that one macro.
create or replace macro cluster_bound(bound, g, sy, sn, syy, snn, syn) as
    case bound
        when 'half' then cluster_ratio_half(g, sy, sn, syy, snn, syn)
        when 'lo' then cluster_ratio_lo(g, sy, sn, syy, snn, syn)
        when 'hi' then cluster_ratio_hi(g, sy, sn, syy, snn, syn)
        when 'rate_lo' then cluster_rate_lo(g, sy, sn, syy, snn, syn)
        when 'rate_hi' then cluster_rate_hi(g, sy, sn, syy, snn, syn)
    end;

-- Aggregate forms over one row per cluster: clustered_half(y, n) etc. in a GROUP BY, each
-- cluster_bound over the six sums of (y, n).
create or replace macro clustered_bound(bound, y, n) as
    cluster_bound(
        bound, count(*), sum(y), sum(n),
        sum(cast(y as double) * y), sum(cast(n as double) * n), sum(cast(y as double) * n)
    );

create or replace macro clustered_half(y, n) as clustered_bound('half', y, n);
create or replace macro clustered_lo(y, n) as clustered_bound('lo', y, n);
create or replace macro clustered_hi(y, n) as clustered_bound('hi', y, n);
create or replace macro clustered_rate_lo(y, n) as clustered_bound('rate_lo', y, n);
create or replace macro clustered_rate_hi(y, n) as clustered_bound('rate_hi', y, n);

-- The adjusted win index, the one way every mart computes it: wins / expected wins, where each
-- seat at an n-player table expects 1/n of a win (1.0 = an average seat). A ratio over games
-- with y = the policy's wins in a game and n = its seats there / n (its expected wins): the
-- `cluster_index_*` macros take G, the wins, the seats, and the sums of n, y^2, n^2 and y*n
-- (expected, ww, ee, we: they add across shards and cells, so a league pools its cells by
-- adding them), the `clustered_index_*` aggregates one row per game (wins, seats, players).
-- An index is not a rate: its interval is NOT clipped (a win rate's clipped bounds times n
-- would be another interval for the same figure).
--
-- No win in any seat (or a win in every seat) is a win rate of exactly 0 (or 1), which has no
-- spread for the formula: as for the rate (cluster_rate_*), the interval is the exact bound
-- for no event in the seats, on the index's scale (times seats / expected wins, the field size
-- within a cell), so the index and the rate of one cell keep one interval.
create or replace macro index_bound(seats, expected) as
    (1.0 - pow(0.025, 1.0 / seats)) * seats / expected;

create or replace macro cluster_index_half(g, wins, seats, expected, ww, ee, we) as
    case
        when g >= 2 and (wins = 0 or wins = seats) then index_bound(seats, expected)
        else cluster_ratio_half(g, wins, expected, ww, ee, we)
    end;

create or replace macro cluster_index_lo(g, wins, seats, expected, ww, ee, we) as
    case
        when g >= 2 and wins = 0 then 0.0
        when g >= 2 and wins = seats then wins / expected - index_bound(seats, expected)
        else cluster_ratio_lo(g, wins, expected, ww, ee, we)
    end;

create or replace macro cluster_index_hi(g, wins, seats, expected, ww, ee, we) as
    case
        when g >= 2 and wins = 0 then index_bound(seats, expected)
        when g >= 2 and wins = seats then wins / expected
        else cluster_ratio_hi(g, wins, expected, ww, ee, we)
    end;

create or replace macro clustered_index(wins, seats, players) as
    sum(wins) / sum(cast(seats as double) / players);

-- cluster_index_* by name ('half', 'lo', 'hi'), as cluster_bound, and its aggregate form over one
-- row per game: y = wins, n = seats / players (the game's expected wins).
create or replace macro cluster_index_bound(bound, g, wins, seats, expected, ww, ee, we) as
    case bound
        when 'half' then cluster_index_half(g, wins, seats, expected, ww, ee, we)
        when 'lo' then cluster_index_lo(g, wins, seats, expected, ww, ee, we)
        when 'hi' then cluster_index_hi(g, wins, seats, expected, ww, ee, we)
    end;

create or replace macro clustered_index_bound(bound, wins, seats, players) as
    cluster_index_bound(
        bound, count(*), sum(wins), sum(seats), sum(cast(seats as double) / players),
        sum(cast(wins as double) * wins),
        sum((cast(seats as double) / players) * (cast(seats as double) / players)),
        sum(cast(wins as double) * (cast(seats as double) / players))
    );

create or replace macro clustered_index_half(wins, seats, players) as
    clustered_index_bound('half', wins, seats, players);
create or replace macro clustered_index_lo(wins, seats, players) as
    clustered_index_bound('lo', wins, seats, players);
create or replace macro clustered_index_hi(wins, seats, players) as
    clustered_index_bound('hi', wins, seats, players);
