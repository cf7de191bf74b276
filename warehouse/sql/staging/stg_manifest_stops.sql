-- One row per run whose spec has a [stop] table (runs/<run>/manifest.json's `stop`): the test
-- (a comparison, or a league's ranking test with its `margin`, `policies` and each look's
-- adjacent `pairs`), its parameters, every look (`waves`) and its decision, typed. Runs
-- without a [stop] have no row. See docs/sequential.md.
with source as (
    select unnest(from_json(manifests(), '[{
        "run": "VARCHAR",
        "stop": {
            "test": "VARCHAR", "compare": ["VARCHAR"], "metric": "VARCHAR",
            "h0": "DOUBLE", "h1": "DOUBLE", "alpha": "DOUBLE", "beta": "DOUBLE",
            "max_games": "BIGINT", "cell": "INTEGER", "wave_games": "BIGINT",
            "planned_games": "BIGINT", "bounds": ["DOUBLE"],
            "margin": "DOUBLE", "policies": ["VARCHAR"],
            "waves": [{
                "wave": "INTEGER", "shards": ["INTEGER"], "games": "BIGINT",
                "estimate": "DOUBLE", "half_width": "DOUBLE", "llr": "DOUBLE",
                "open": "BIGINT", "pairs": [{
                    "above": "VARCHAR", "below": "VARCHAR", "meetings": "BIGINT",
                    "estimate": "DOUBLE", "half_width": "DOUBLE", "llr": "DOUBLE",
                    "verdict": "VARCHAR"
                }]
            }],
            "decision": {
                "result": "VARCHAR", "wave": "INTEGER", "games": "BIGINT",
                "estimate": "DOUBLE", "half_width": "DOUBLE", "llr": "DOUBLE",
                "open": "BIGINT", "pairs": [{
                    "above": "VARCHAR", "below": "VARCHAR", "meetings": "BIGINT",
                    "estimate": "DOUBLE", "half_width": "DOUBLE", "llr": "DOUBLE",
                    "verdict": "VARCHAR"
                }]
            }
        }
    }]')) as m
),

final as (
    select
        m.run,
        m.stop.test as test,
        m.stop.compare[1] as policy_a,
        m.stop.compare[2] as policy_b,
        m.stop.metric as metric,
        m.stop.h0 as h0,
        m.stop.h1 as h1,
        m.stop.alpha as alpha,
        m.stop.beta as beta,
        m.stop.max_games as max_games,
        m.stop.cell as cell,
        m.stop.wave_games as wave_games,
        m.stop.planned_games as planned_games,
        m.stop.bounds[1] as lower_bound,
        m.stop.bounds[2] as upper_bound,
        m.stop.margin as margin,
        m.stop.policies as policies,
        m.stop.waves as waves,
        m.stop.decision as decision
    from source
    where m.stop is not null
)

select * from final
