"""The kernel's ev decision (flip7.kernel.core.ev_hit) against flip7.policies.ev, hand by hand,
and the census sums the game loop keeps for it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from flip7 import kernel
from flip7.cards import N_CARD_IDS, PLUS_VALUE
from flip7.kernel import core
from flip7.kernel.encode import deck_counts
from flip7.observation import ACTIVE, CLASSIC_RULES, Observation
from flip7.policies import parse_policies
from flip7.policies.ev import EVPolicy
from flip7.rules import parse_ruleset

N_NUMBERS = core.N13 + 1
#: Card ids ev looks at: numbers, modifiers, actions (a classic deck holds no other).
CLASSIC_IDS = core.LAST_CLASSIC + 1


@njit(cache=False)
def kernel_decisions(pls, cds, seats, counting, bonus, out):  # type: ignore[no-untyped-def]
    """out[i] = ev_hit on hand i, its census sums computed from scratch."""
    for i in range(pls.shape[0]):
        cd = cds[i]
        core.census_sums(cd)
        out[i] = core.ev_hit(pls[i], cd, seats[i], counting[i], bonus[i])


def random_hand(rng: np.random.Generator, deck: np.ndarray) -> dict[str, Any]:
    """A census any game can reach (each copy on the table, discarded or in the draw pile,
    `scarce`: most copies seen, so that few cards are left and ties are common), and a row for
    the seat drawn from the cards on the table."""
    scarce = rng.random() < 0.4
    vis = np.zeros(N_CARD_IDS, dtype=np.int64)
    dis = np.zeros(N_CARD_IDS, dtype=np.int64)
    for c in range(CLASSIC_IDS):
        d = int(deck[c])
        if d == 0:
            continue
        vis[c] = rng.integers(0, d + 1) if rng.random() < 0.6 else 0
        rest = d - vis[c]
        dis[c] = rest if scarce and rng.random() < 0.8 else rng.integers(0, rest + 1)
    shown = [c for c in range(N_NUMBERS) if vis[c] > 0]
    k = int(min(len(shown), rng.integers(0, 7)))
    held = [int(c) for c in rng.choice(shown, size=k, replace=False)] if k else []
    mods = [c for c in range(core.PLUS2, core.TIMES2) if vis[c] > 0 and rng.random() < 0.5]
    return {
        "vis": vis,
        "dis": dis,
        "mask": sum(1 << c for c in held),
        "nsum": sum(held),
        "ncount": k,
        "plus": sum(int(PLUS_VALUE[c]) for c in mods),
        "x2": bool(vis[core.TIMES2] > 0 and rng.random() < 0.5),
        "sc": bool(vis[core.SECOND_CHANCE] > 0 and rng.random() < 0.5),
        "counting": bool(rng.random() < 0.5),
        "bonus": int(rng.choice([0, 15, int(rng.integers(0, 41))])),
    }


def observation(hand: dict[str, Any], deck: np.ndarray, seat: int, n: int) -> Observation:
    obs = Observation(seat)
    obs.n_players = n
    obs.variant = CLASSIC_RULES
    obs.bonus = hand["bonus"]
    obs.deck = [int(x) for x in deck]
    obs.deck_size = int(deck.sum())
    obs.visible = [int(x) for x in hand["vis"]]
    obs.discarded = [int(x) for x in hand["dis"]]
    obs.mask, obs.nsum, obs.ncount = [0] * n, [0] * n, [0] * n
    obs.plus, obs.x2, obs.has_sc, obs.status = [0] * n, [False] * n, [False] * n, [ACTIVE] * n
    obs.mask[seat] = hand["mask"]
    obs.nsum[seat] = hand["nsum"]
    obs.ncount[seat] = hand["ncount"]
    obs.plus[seat] = hand["plus"]
    obs.x2[seat] = hand["x2"]
    obs.has_sc[seat] = hand["sc"]
    return obs


def reference_sums(obs: Observation, counting: bool) -> tuple[int, int]:
    """(acc, total) of flip7.policies.ev.hit_value, in integers: acc / total vs now."""
    p = obs.seat
    mult = 2 if obs.x2[p] else 1
    now = obs.nsum[p] * mult + obs.plus[p]
    acc = total = 0
    for c in range(CLASSIC_IDS):
        u = obs.deck[c] - obs.visible[c] - (obs.discarded[c] if counting else 0)
        if u <= 0:
            continue
        total += u
        if c < N_NUMBERS:
            if obs.mask[p] >> c & 1:
                v = now if obs.has_sc[p] else 0
            else:
                v = (obs.nsum[p] + c) * mult + obs.plus[p]
                v += obs.bonus if obs.ncount[p] == 6 else 0
        elif c == core.TIMES2:
            v = now if obs.x2[p] else obs.nsum[p] * 2 + obs.plus[p]
        else:
            v = now + int(PLUS_VALUE[c])
        acc += u * v
    return acc, total * now


@pytest.mark.parametrize("which", ["one deck", "two decks", "any deck"])
def test_ev_hit_decides_as_the_reference_policy_hand_by_hand(which):
    """20,000 hands per deck, counting or not, a Second Chance, x2, modifiers, the seventh
    number's bonus: the kernel's ev_hit says hit exactly when EVPolicy(counting).hit does,
    ties (expected value equal to the points now, or no card left) included."""
    rng = np.random.default_rng(["one deck", "two decks", "any deck"].index(which))
    k, n = 20_000, 4
    ruleset = parse_ruleset("3.1")
    pls = np.zeros((k, core.N_FIELDS, n), dtype=np.int64)
    cds = np.zeros((k, core.N_CENSUS, N_CARD_IDS), dtype=np.int64)
    seats = rng.integers(0, n, size=k)
    counting = np.zeros(k, dtype=np.int64)
    bonus = np.zeros(k, dtype=np.int64)
    expected = np.zeros(k, dtype=bool)
    ties = 0
    for i in range(k):
        if which == "any deck":  # any copies of each card, the 13 included
            deck = np.zeros(N_CARD_IDS, dtype=np.int64)
            deck[:CLASSIC_IDS] = rng.integers(0, 4, size=CLASSIC_IDS)
        else:
            deck = deck_counts(4 if which == "one deck" else 19, ruleset)
        hand = random_hand(rng, deck)
        p = int(seats[i])
        obs = observation(hand, deck, p, n)
        expected[i] = EVPolicy(counting=bool(hand["counting"])).hit(obs)
        acc, now_total = reference_sums(obs, bool(hand["counting"]))
        ties += acc == now_total
        pl, cd = pls[i], cds[i]
        cd[core.C_DECK], cd[core.C_VIS], cd[core.C_DIS] = deck, hand["vis"], hand["dis"]
        pl[core.F_MASK, p], pl[core.F_NSUM, p] = hand["mask"], hand["nsum"]
        pl[core.F_NCOUNT, p], pl[core.F_PLUS, p] = hand["ncount"], hand["plus"]
        pl[core.F_X2, p], pl[core.F_SC, p] = hand["x2"], hand["sc"]
        counting[i], bonus[i] = hand["counting"], hand["bonus"]
    got = np.zeros(k, dtype=np.int64)
    kernel_decisions(pls, cds, seats, counting, bonus, got)
    wrong = np.flatnonzero(got.astype(bool) != expected)
    assert wrong.size == 0, f"{wrong.size} hands differ, the first: #{wrong[0]}"
    assert ties > 100 and 0.05 < expected.mean() < 0.95  # the hands test both answers and ties


def census(cd: np.ndarray, counting: bool) -> list[int]:
    """[numbers, their values, +modifier points] over the copies off the table (and, counting,
    out of the discard pile), summed card by card."""
    sums = [0, 0, 0]
    for c in range(core.TIMES2):
        u = int(cd[core.C_DECK, c] - cd[core.C_VIS, c] - (cd[core.C_DIS, c] if counting else 0))
        if c < N_NUMBERS:
            sums[0] += u
            sums[1] += u * c
        else:
            sums[2] += u * int(PLUS_VALUE[c])
    return sums


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**63),
    st.sampled_from([1, 2, 4, 6, 19]),
    st.sampled_from(["3.1", "immediate", "legacy(max_rounds=5)"]),
    st.integers(0, 1),
)
def test_the_census_sums_follow_the_cards(monkeypatch_workspace, seed, n, ruleset, one_round):
    """After a game (Second Chances spent, reshuffles, the discard pile a round's cards deep),
    the sums the kernel kept card by card for ev equal the census summed afresh."""
    specs = ["evc", "ev", "sum:25", "bustc:0.3"] * 5
    lineup = parse_policies(",".join(specs[:n]))
    seeds = np.array([seed], dtype=np.uint64)
    kernel.play_batch(
        parse_ruleset(ruleset),
        lineup,
        np.arange(n)[None, :],
        seeds,
        one_round=bool(one_round),
    )
    cd = monkeypatch_workspace[-1][2]
    off_table, left = census(cd, False), census(cd, True)
    assert cd[core.C_UNSEEN, :3].tolist() == off_table
    assert cd[core.C_GONE, :3].tolist() == [a - b for a, b in zip(off_table, left, strict=True)]
    deck = cd[core.C_DECK]
    values = sum(int(deck[c]) * c for c in range(N_NUMBERS))
    plus = sum(int(deck[c] * PLUS_VALUE[c]) for c in range(core.PLUS2, core.TIMES2))
    assert cd[core.C_ALL, :3].tolist() == [int(deck[:N_NUMBERS].sum()), values, plus]


@pytest.fixture(scope="module")
def monkeypatch_workspace():  # type: ignore[no-untyped-def]
    """Every workspace the kernel's batches allocate, newest last."""
    made = []
    real = core.workspace

    def recording(n, deck):  # type: ignore[no-untyped-def]
        work = real(n, deck)
        made.append(work)
        return work

    mp = pytest.MonkeyPatch()
    mp.setattr(core, "workspace", recording)
    yield made
    mp.undo()
