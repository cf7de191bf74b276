-- Statistics helpers shared by the marts: 95% Wilson score intervals for a proportion k/n and
-- the standard error of a mean from a count, a sum and a sum of squares (z = 1.959964).
create or replace macro wilson_lo(k, n) as
    case when n > 0 then greatest(0.0,
        (k / n + 1.920729410347062 / n
            - 1.959963984540054 * sqrt((k / n) * (1 - k / n) / n + 0.960364705173531 / (n * n)))
        / (1 + 3.841458820694124 / n)) end;

create or replace macro wilson_hi(k, n) as
    case when n > 0 then least(1.0,
        (k / n + 1.920729410347062 / n
            + 1.959963984540054 * sqrt((k / n) * (1 - k / n) / n + 0.960364705173531 / (n * n)))
        / (1 + 3.841458820694124 / n)) end;

create or replace macro mean_se(n, s, ss) as
    case when n > 1 then sqrt(greatest((ss - s * s / n) / (n - 1), 0.0) / n) end;
