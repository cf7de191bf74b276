-- materialized: view
-- Plackett-Luce ratings of every policy of a run, per field size and pooled over field sizes
-- (players NULL), from each game's final ranking: rating = log-odds of finishing ahead of the
-- anchor policy (ev when it played: its rating is 0), with a 95% interval clustered by game
-- (sandwich variance). The SQL turns games into choice-stage counts (int_rating_outcomes); the
-- fit, an exact maximum likelihood, is `plackett_luce` (warehouse/ratings.py, scipy); it gets
-- the outcomes in one order (by field size and outcome), so that a rating is the same number
-- to the last digit however many threads DuckDB gathered them with.
-- `cov` is the rating's row of the covariance matrix (indexed by `idx`), which rating_pairs
-- uses for the model's pairwise chances; `gap_to_next` is the step to the next place with its
-- interval: a place is separated from the next when gap_to_next_lo > 0 (95%, one look: not a
-- sequential test).
with outcomes as (
    select * from int_rating_outcomes
),

fits as (
    select
        run,
        ruleset,
        any_value(variant) as variant,
        players,
        plackett_luce(
            list(struct_pack(games, seats, stages) order by players, outcome), 'ev'
        ) as fit
    from outcomes
    group by grouping sets ((run, ruleset, players), (run, ruleset))
),

policies as (
    select
        run,
        variant,
        ruleset,
        players,
        unnest(fit) as r
    from fits
),

ranked as (
    select
        run,
        variant,
        ruleset,
        cast(players as integer) as players,
        cast(row_number() over w as integer) as place,
        r.policy as policy,
        r.rating as rating,
        r.lo as lo,
        r.hi as hi,
        r.se as se,
        r.games as games,
        r.seats as seats,
        r.anchor as anchor,
        r.converged as converged,
        r.idx as idx,
        r.cov as cov,
        lead(r.policy) over w as next_policy,
        lead(r.rating) over w as next_rating,
        lead(r.se) over w as next_se,
        lead(r.idx) over w as next_idx
    from policies
    window w as (partition by run, ruleset, players order by r.rating desc, r.policy)
),

final as (
    select
        * exclude (next_rating, next_se, next_idx),
        -- the step down to the next place, with its own interval (the two ratings covary)
        rating - next_rating as gap_to_next,
        sqrt(greatest(se * se + next_se * next_se - 2 * cov[next_idx], 0.0)) as gap_to_next_se,
        rating - next_rating - 1.959963984540054
        * sqrt(greatest(se * se + next_se * next_se - 2 * cov[next_idx], 0.0)) as gap_to_next_lo,
        rating - next_rating + 1.959963984540054
        * sqrt(greatest(se * se + next_se * next_se - 2 * cov[next_idx], 0.0)) as gap_to_next_hi,
        -- standard errors shrink as 1 / sqrt(games): the factor on the run's games that would
        -- put the step's 95% interval above 0 with 80% power, were the step as estimated
        case when rating > next_rating then
            power(
                (1.959963984540054 + 0.8416212335729143)
                * sqrt(greatest(se * se + next_se * next_se - 2 * cov[next_idx], 0.0))
                / (rating - next_rating),
                2
            )
        end as games_factor_to_separate
    from ranked
)

select * from final
