"""Plackett-Luce ratings: every policy of a run on one log-odds scale, from each game's ranking.

A game's final ranking is read as a sequence of choices: the winner is chosen from all seats,
the second from the rest, and so on, each seat i with probability exp(theta_i) / (sum of
exp(theta_j) over the seats still in), so theta_a - theta_b is the log-odds that a finishes
ahead of b at any table (Luce's choice axiom). Tied seats (equal totals share a rank) are each
chosen from the set that still holds all of them (Breslow's treatment of ties: a two-seat tie
counts as half a win each way). The likelihood depends only on the choice stages, so SQL turns
the games into counts (`int_rating_outcomes`: each distinct outcome with its number of games and
its stages) and `fit` maximises the exact likelihood with scipy. The scale is anchored at one
policy (ev when it played): its rating is 0 and the others read relative to it.

Intervals are 95% Wald intervals with a sandwich (cluster-robust) variance, clustered by game:
H^-1 B H^-1 with H the information and B the sum over games of each game's score outer product,
times G / (G - 1). A weak normal prior (sd PRIOR_SD log-odds around the anchor) keeps a rating
finite when a policy never (or always) finishes ahead; with data, its pull is negligible.
`register` makes `fit` the SQL function `plackett_luce(outcomes, anchor)` the `ratings` mart calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

if TYPE_CHECKING:  # scipy takes a second or more to import: only a fit loads it
    from scipy import sparse

Z95 = 1.959963984540054
PRIOR_SD = 10.0
#: The policy the scale is anchored at when it played (else the first policy by name).
ANCHOR = "ev"


@dataclass(frozen=True)
class Stages:
    """A fit's data, one entry per choice stage (of one game of each distinct outcome).

    `members[s, k]` counts the seats of policy k still in at stage s, `chosen[s]` is the
    policy chosen there, `outcome[s]` the stage's outcome; `games[o]` is the number of games
    with outcome o and `tables[o, k]` the seats of policy k at its table."""

    policies: list[str]
    games: NDArray[np.float64]
    outcome: NDArray[np.int64]
    chosen: NDArray[np.int64]
    members: sparse.csr_matrix
    tables: sparse.csr_matrix


@dataclass(frozen=True)
class Fit:
    """Ratings (anchor = 0) with their covariance, sandwich-clustered by game."""

    policies: list[str]
    anchor: str
    rating: NDArray[np.float64]
    cov: NDArray[np.float64]
    games: NDArray[np.int64]
    seats: NDArray[np.int64]
    converged: bool

    @property
    def se(self) -> NDArray[np.float64]:
        return np.sqrt(np.maximum(np.diag(self.cov), 0.0))


def _shares(
    theta: NDArray[np.float64], members: sparse.csr_matrix
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each stage's log denominator and each policy's chance to be chosen there."""
    from scipy import sparse

    top = theta.max()
    weights = members.multiply(np.exp(theta - top)[None, :]).tocsr()
    denom = np.asarray(weights.sum(axis=1)).ravel()
    shares = sparse.diags(1.0 / denom) @ weights
    return np.log(denom) + top, shares.toarray()


def fit(data: Stages, anchor: str | None = None) -> Fit:
    """Maximise the Plackett-Luce likelihood over the stages; ratings relative to `anchor`."""
    from scipy import optimize

    k = len(data.policies)
    if anchor is None or anchor not in data.policies:
        anchor = ANCHOR if ANCHOR in data.policies else data.policies[0]
    a = data.policies.index(anchor)
    free = np.array([i for i in range(k) if i != a], dtype=np.int64)
    table_games = (data.tables > 0).astype(np.float64).T @ data.games
    table_seats = data.tables.T @ data.games
    if k == 1:  # one policy (a table of copies): nothing to compare, the anchor alone
        return Fit(
            policies=list(data.policies),
            anchor=anchor,
            rating=np.zeros(1),
            cov=np.zeros((1, 1)),
            games=np.rint(table_games).astype(np.int64),
            seats=np.rint(table_seats).astype(np.int64),
            converged=True,
        )
    w = data.games[data.outcome]
    chosen_total = np.bincount(data.chosen, weights=w, minlength=k)
    prior = 1.0 / PRIOR_SD**2

    def full(x: NDArray[np.float64]) -> NDArray[np.float64]:
        theta = np.zeros(k)
        theta[free] = x
        return theta

    def negloglik(x: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        theta = full(x)
        logden, shares = _shares(theta, data.members)
        ll = chosen_total @ theta - w @ logden - 0.5 * prior * (x @ x)
        grad = chosen_total - w @ shares
        return -float(ll), -(grad[free] - prior * x)

    def information(x: NDArray[np.float64]) -> NDArray[np.float64]:
        _, shares = _shares(full(x), data.members)
        ws = shares * w[:, None]
        info = np.diag(ws.sum(axis=0)) - shares.T @ ws
        return info[np.ix_(free, free)] + prior * np.eye(k - 1)

    res = optimize.minimize(
        negloglik,
        np.zeros(k - 1),
        jac=True,
        hess=information,
        method="trust-exact",
        options={"gtol": 1e-8, "maxiter": 200},
    )
    theta = full(res.x)
    # trust-exact can stop short of gtol at a flat optimum (its model predicts no gain): a
    # gradient that small per game is converged all the same
    converged = bool(res.success) or float(np.abs(res.jac).max()) <= 1e-6 * data.games.sum()
    # Each game's score: for every stage, the chosen policy's indicator minus the shares.
    _, shares = _shares(theta, data.members)
    per_stage = -shares
    per_stage[np.arange(len(data.chosen)), data.chosen] += 1.0
    n_out = len(data.games)
    score = np.zeros((n_out, k))
    np.add.at(score, data.outcome, per_stage)
    score = score[:, free]
    total_games = data.games.sum()
    meat = (score * data.games[:, None]).T @ score
    if total_games > 1:
        meat *= total_games / (total_games - 1)
    bread = np.linalg.pinv(information(res.x))  # positive definite (the prior); pinv for safety
    cov = np.zeros((k, k))
    cov[np.ix_(free, free)] = bread @ meat @ bread
    return Fit(
        policies=list(data.policies),
        anchor=anchor,
        rating=theta,
        cov=cov,
        games=np.rint(table_games).astype(np.int64),
        seats=np.rint(table_seats).astype(np.int64),
        converged=converged,
    )


def stages_from_rankings(
    policies: list[str], tables: NDArray[np.int64], ranks: NDArray[np.int64]
) -> Stages:
    """Stages from games given as arrays: `tables[g, s]` the policy index in seat s of game g,
    `ranks[g, s]` its rank (1 = first; ties share the better rank). Outcomes are deduplicated,
    so this is what the SQL computes (used by the tests and the simulation check)."""
    from scipy import sparse

    # one outcome per distinct (line-up, ranking), seats in a canonical order
    order = np.lexsort((tables, ranks), axis=1)
    canon = np.concatenate(
        [np.take_along_axis(tables, order, 1), np.take_along_axis(ranks, order, 1)], axis=1
    )
    uniq, counts = np.unique(canon, axis=0, return_counts=True)
    n = tables.shape[1]
    k = len(policies)
    rows, cols, outcome, chosen = [], [], [], []
    stage = 0
    for o, row in enumerate(uniq):  # distinct outcomes, not games
        pol, rank = row[:n], row[n:]
        for s in range(n):
            still = rank >= rank[s]
            if still.sum() < 2:
                continue
            for p in pol[still]:
                rows.append(stage)
                cols.append(p)
            outcome.append(o)
            chosen.append(pol[s])
            stage += 1
    members = sparse.csr_matrix(
        (np.ones(len(rows)), (np.array(rows), np.array(cols))), shape=(stage, k)
    )
    t_rows = np.repeat(np.arange(len(uniq)), n)
    table_m = sparse.csr_matrix(
        (np.ones(len(t_rows)), (t_rows, uniq[:, :n].ravel())), shape=(len(uniq), k)
    )
    return Stages(
        policies=list(policies),
        games=counts.astype(np.float64),
        outcome=np.array(outcome, dtype=np.int64),
        chosen=np.array(chosen, dtype=np.int64),
        members=members,
        tables=table_m,
    )


def stages_from_arrow(outcomes: pa.ListScalar | pa.Array) -> Stages:
    """Stages from one `list(struct(games, seats, stages))` value of `int_rating_outcomes`."""
    from scipy import sparse

    arr = outcomes.values if isinstance(outcomes, pa.ListScalar) else outcomes
    games = np.asarray(arr.field("games").to_numpy(zero_copy_only=False), dtype=np.float64)
    seats = arr.field("seats")
    stages = arr.field("stages")
    seat_names = pc.list_flatten(seats)
    policies = sorted(set(seat_names.to_pylist()))
    index = pa.array(policies)
    n_out = len(arr)
    seat_rows = np.repeat(np.arange(n_out), np.diff(seats.offsets.to_numpy()))
    seat_cols = pc.index_in(seat_names, value_set=index).to_numpy()
    tables = sparse.csr_matrix(
        (np.ones(len(seat_rows)), (seat_rows, seat_cols)), shape=(n_out, len(policies))
    )
    flat = pc.list_flatten(stages)
    stage_outcome = np.repeat(np.arange(n_out), np.diff(stages.offsets.to_numpy()))
    chosen = pc.index_in(flat.field("chosen"), value_set=index).to_numpy()
    remaining = flat.field("remaining")
    m_rows = np.repeat(np.arange(len(flat)), np.diff(remaining.offsets.to_numpy()))
    m_cols = pc.index_in(pc.list_flatten(remaining), value_set=index).to_numpy()
    members = sparse.csr_matrix(
        (np.ones(len(m_rows)), (m_rows, m_cols)), shape=(len(flat), len(policies))
    )
    return Stages(
        policies=policies,
        games=games,
        outcome=stage_outcome.astype(np.int64),
        chosen=np.asarray(chosen, dtype=np.int64),
        members=members,
        tables=tables,
    )


RESULT_TYPE = (
    "STRUCT(policy VARCHAR, idx INTEGER, anchor VARCHAR, rating DOUBLE, se DOUBLE, "
    "lo DOUBLE, hi DOUBLE, games BIGINT, seats BIGINT, converged BOOLEAN, cov DOUBLE[])[]"
)


def _rows(fitted: Fit) -> list[dict[str, object]]:
    se = fitted.se
    return [
        {
            "policy": p,
            "idx": i + 1,  # 1-based, as DuckDB lists index
            "anchor": fitted.anchor,
            "rating": float(fitted.rating[i]),
            "se": float(se[i]),
            "lo": float(fitted.rating[i] - Z95 * se[i]),
            "hi": float(fitted.rating[i] + Z95 * se[i]),
            "games": int(fitted.games[i]),
            "seats": int(fitted.seats[i]),
            "converged": fitted.converged,
            "cov": [float(c) for c in fitted.cov[i]],
        }
        for i, p in enumerate(fitted.policies)
    ]


def _udf(outcomes: pa.Array | pa.ChunkedArray, anchors: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The SQL function: one fit per row (a row is one group's outcomes)."""
    if isinstance(outcomes, pa.ChunkedArray):
        outcomes = outcomes.combine_chunks()
    if isinstance(anchors, pa.ChunkedArray):
        anchors = anchors.combine_chunks()
    out: list[list[dict[str, object]] | None] = []
    for i in range(len(outcomes)):
        value = outcomes[i]
        if not value.is_valid or len(value) == 0:
            out.append(None)
            continue
        anchor = anchors[i].as_py()
        out.append(_rows(fit(stages_from_arrow(value), anchor)))
    return pa.array(out, type=_arrow_result_type())


def _arrow_result_type() -> pa.DataType:
    return pa.list_(
        pa.struct(
            [
                ("policy", pa.string()),
                ("idx", pa.int32()),
                ("anchor", pa.string()),
                ("rating", pa.float64()),
                ("se", pa.float64()),
                ("lo", pa.float64()),
                ("hi", pa.float64()),
                ("games", pa.int64()),
                ("seats", pa.int64()),
                ("converged", pa.bool_()),
                ("cov", pa.list_(pa.float64())),
            ]
        )
    )


OUTCOMES_TYPE = (
    "STRUCT(games BIGINT, seats VARCHAR[], stages STRUCT(remaining VARCHAR[], chosen VARCHAR)[])[]"
)


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Make `fit` the SQL function `plackett_luce(outcomes, anchor)` on this connection (once)."""
    known = con.execute(
        "select count(*) from duckdb_functions() where function_name = 'plackett_luce'"
    ).fetchall()
    if known[0][0]:
        return
    con.create_function(
        "plackett_luce",
        _udf,
        [duckdb.sqltype(OUTCOMES_TYPE), duckdb.sqltype("VARCHAR")],
        duckdb.sqltype(RESULT_TYPE),
        type="arrow",
        side_effects=False,
    )
