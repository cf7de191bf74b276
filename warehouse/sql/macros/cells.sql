-- The cell key, named once: a cell is (run, variant, ruleset, field size, line-up), as the
-- statistics contract says (docs/warehouse.md). A mart selects it with
-- `columns(lambda c: is_cell_key(c))`: the five columns in the order the relation it reads holds
-- them (int_cell_figures: run, variant, ruleset, players, lineup).
create or replace macro is_cell_key(c) as
    c in ('run', 'variant', 'ruleset', 'players', 'lineup');
