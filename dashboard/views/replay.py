"""Game replay: one logged game, card by card."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, filters, replay

GAMES_LISTED = 500

f = filters.require()
st.title("Game replay")
st.caption(
    "Answers: what happened in one logged game, card by card: who drew what, which "
    "actions hit whom, who busted, and how the scores grew."
)

games = data.games(f.root, f.run, GAMES_LISTED, f.policy_filter)
if games.empty:
    st.info("No logged game of this run seats the selected policies.")
    st.stop()
rows = {int(g["game"]): g for g in games.to_dict("records")}
game = st.selectbox(
    f"Game (the run's first {GAMES_LISTED} games that seat the selected policies)",
    list(rows),
    format_func=lambda g: replay.game_label(rows[g]),
    key=f"rp_game:{f.run}",
)
seats = replay.lineup(rows[game])
timeline = data.game_timeline(f.root, f.run, game)
ends = replay.steps(timeline)
starts = replay.round_starts(timeline, ends)
last = len(ends) - 1
step_key, round_key = f"rp_step:{f.run}:{game}", f"rp_round:{f.run}:{game}"
st.session_state.setdefault(step_key, 0)


def go(step: int) -> None:
    st.session_state[step_key] = max(0, min(last, step))


def jump() -> None:
    picked = st.session_state.get(round_key)
    if picked is not None:
        go(starts[picked])


here = st.session_state[step_key]
nav = st.columns([1, 1.3, 1.3, 1, 3], vertical_alignment="bottom")
nav[0].button("Start", icon=":material/first_page:", on_click=go, args=(0,), key="rp_first")
nav[1].button(
    "Previous card",
    icon=":material/chevron_left:",
    on_click=go,
    args=(here - 1,),
    key="rp_prev",
    disabled=here <= 0,
)
nav[2].button(
    "Next card",
    icon=":material/chevron_right:",
    on_click=go,
    args=(here + 1,),
    key="rp_next",
    disabled=here >= last,
    type="primary",
)
nav[3].button("End", icon=":material/last_page:", on_click=go, args=(last,), key="rp_last")
nav[4].selectbox(
    "Jump to round",
    list(starts),
    index=None,
    key=round_key,
    on_change=jump,
    format_func=lambda r: f"round {r}",
    placeholder="round ...",
)
step = st.slider("Step (one card each)", 0, max(last, 1), key=step_key, disabled=last < 1)
end = ends[min(step, last)]
first = ends[step - 1] + 1 if step > 0 else 0
current_round = int(timeline.iloc[end]["round"])

st.subheader(f"Round {current_round} · card {step} of {last}")
for row in timeline.iloc[first : end + 1].to_dict("records"):
    st.markdown(f"- {replay.describe(row)}")
st.dataframe(
    replay.board_frame(replay.board(timeline, seats, end)), hide_index=True, placeholder="–"
)

left, right = st.columns([3, 2])
with left:
    st.subheader("Game totals by round")
    totals = replay.totals_by_round(timeline, seats, current_round)
    st.altair_chart(charts.game_totals(totals), width="stretch")
    st.caption(
        "Points after each round, from the logged round scores; the big dots mark the "
        "round on screen."
    )
with right:
    st.subheader("Every event so far (newest first)")
    st.dataframe(replay.log_frame(timeline.iloc[: end + 1]), hide_index=True, height=320)
