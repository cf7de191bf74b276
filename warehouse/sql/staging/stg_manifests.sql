-- One row per run manifest (runs/<run>/manifest.json), typed. The manifests' text is read by
-- build.py into the `manifests()` macro as one JSON array, so a lake without manifests still types.
with source as (
    -- from_json takes the fields named here and ignores any others a manifest carries.
    select unnest(from_json(manifests(), '[{
        "run": "VARCHAR",
        "schema_version": "INTEGER",
        "package_version": "VARCHAR",
        "rules_version": "INTEGER",
        "ruleset": "VARCHAR",
        "rulesets": ["VARCHAR"],
        "variant": "VARCHAR",
        "seed": "UBIGINT",
        "rotate": "BOOLEAN",
        "created": "VARCHAR",
        "status": "VARCHAR",
        "error": "VARCHAR",
        "planned_shards": "INTEGER",
        "planned_games": "BIGINT",
        "cells": [{
            "cell": "INTEGER", "players": "INTEGER", "lineup": ["VARCHAR"], "pair": "INTEGER",
            "games": "BIGINT", "game_offset": "BIGINT", "label": "VARCHAR", "ruleset": "VARCHAR"
        }],
        "shards": "MAP(VARCHAR, STRUCT(cell INTEGER, start BIGINT, stop BIGINT, games BIGINT, \"rows\" STRUCT(events BIGINT, rounds BIGINT, rollups BIGINT, games BIGINT), seconds DOUBLE))"
    }]')) as m
),

final as (
    select
        m.run,
        m.schema_version,
        m.package_version,
        m.rules_version,
        m.ruleset,
        m.rulesets,
        m.variant,
        m.seed,
        m.rotate,
        try_cast(m.created as timestamptz) as created,
        -- a run its user stopped (Ctrl-C, SIGTERM: recorded `failed` with that reason) reads
        -- `interrupted`, as `flip7 tournament status` says: it resumes with --resume
        case
            when m.status = 'failed' and m.error in ('interrupted', 'terminated')
                then 'interrupted'
            else m.status
        end as status,
        m.planned_shards,
        m.planned_games,
        m.cells,
        m.shards
    from source
)

select * from final
