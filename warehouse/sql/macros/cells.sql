-- The cell key, named once: a cell is (run, variant, ruleset, field size, line-up), as the
-- statistics contract says (docs/warehouse.md). A mart selects it with
-- `columns(lambda c: is_cell_key(c))`: the five columns in the order the relation it reads holds
-- them (int_cell_figures: run, variant, ruleset, players, lineup).
create or replace macro is_cell_key(c) as
    c in ('run', 'variant', 'ruleset', 'players', 'lineup');
-- The cell key and the pipeline's cell number beside it, as an intermediate relation that
-- carries a cell onto other rows selects them: `columns(lambda c: is_cell_column(c))`.
create or replace macro is_cell_column(c) as
    is_cell_key(c) or c = 'cell';
