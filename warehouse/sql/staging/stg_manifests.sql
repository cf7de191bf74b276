-- One row per run manifest (runs/<run>/manifest.json), typed. The manifests' text is read by
-- build.py into the `manifests()` macro as one JSON array, so a lake without manifests still types.
with source as (
    select unnest(cast(cast(manifests() as json) as struct(
        run varchar,
        schema_version integer,
        package_version varchar,
        rules_version integer,
        ruleset varchar,
        variant varchar,
        seed ubigint,
        created varchar,
        status varchar,
        planned_shards integer,
        planned_games bigint,
        cells struct(
            cell integer, players integer, lineup varchar[], pair integer, games bigint,
            game_offset bigint
        )[],
        shards map(varchar, struct(
            cell integer, start bigint, stop bigint, games bigint,
            "rows" struct(events bigint, rounds bigint, games bigint), seconds double
        ))
    )[])) as m
),

final as (
    select
        m.run,
        m.schema_version,
        m.package_version,
        m.rules_version,
        m.ruleset,
        m.variant,
        m.seed,
        try_cast(m.created as timestamptz) as created,
        m.status,
        m.planned_shards,
        m.planned_games,
        m.cells,
        m.shards
    from source
)

select * from final
