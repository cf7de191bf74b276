-- A look of a run's sequential test as its manifest records it (the [stop] table's waves, and
-- a ranking test's pairs: estimate, half_width, llr; pipeline/sprt.py, pipeline/ranking.py):
-- its estimate with the 95% interval and its log-likelihood ratio, the columns sprt_waves and
-- ranking_stops show, as a struct a mart selects with unnest(look_estimate(look)).
create or replace macro look_estimate(look) as {
    'estimate': look.estimate,
    'estimate_lo': look.estimate - look.half_width,
    'estimate_hi': look.estimate + look.half_width,
    'llr': look.llr
};
