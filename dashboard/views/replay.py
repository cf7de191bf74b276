"""Game replay: one logged game, card by card."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, filters, replay

GAMES_LISTED = 500

f = filters.page(
    "Game replay",
    "what happened in one logged game, card by card: who drew what, which "
    "actions hit whom, who busted, and how the scores grew.",
)

span = data.game_ids(f.root, f.run)
if span is None:
    st.info("This run has no logged game.")
    st.stop()
lo, hi, count = span
id_key, pick_key = f"rp_id:{f.run}", f"rp_game:{f.run}"
st.session_state.setdefault(id_key, lo)
games = data.games(f.root, f.run, GAMES_LISTED, f.policy_filter)
rows = {int(g["game"]): g for g in games.to_dict("records")}


def picked() -> None:
    choice = st.session_state.get(pick_key)
    if choice is not None:
        st.session_state[id_key] = choice


pick = st.columns([1, 3], vertical_alignment="bottom")
game = int(
    pick[0].number_input(
        "Game id",
        min_value=lo,
        max_value=hi,
        step=1,
        key=id_key,
        help=f"Any of the run's {count:,} logged games: ids {lo}..{hi}.",
    )
)
pick[1].selectbox(
    f"Or browse (the first {GAMES_LISTED} games that seat the selected policies)",
    list(rows),
    index=None,
    format_func=lambda g: replay.game_label(rows[g]),
    key=pick_key,
    on_change=picked,
    placeholder=f"{len(rows):,} games listed" if rows else "no game seats these policies",
)
row = rows.get(game)
if row is None:
    found = data.game(f.root, f.run, game)
    if found.empty:
        st.error(
            f"Run {f.run} has no game {game}: its {count:,} logged games have ids {lo}..{hi}, "
            "with gaps. Type another id."
        )
        st.stop()
    row = found.to_dict("records")[0]
st.caption(replay.game_label(row))
seats = replay.lineup(row)
vengeance = replay.is_vengeance(row)
try:
    timeline = data.game_timeline(f.root, f.run, game)
except data.UnreadableGameError as exc:
    st.error(f"Game {game} of run {f.run} cannot be replayed: {exc}")
    st.stop()
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
# A row that wraps (not fixed columns): at 800 px the buttons keep their whole labels.
nav = st.container(horizontal=True, vertical_alignment="bottom")
nav.button("Start", icon=":material/first_page:", on_click=go, args=(0,), key="rp_first")
nav.button(
    "Previous card",
    icon=":material/chevron_left:",
    on_click=go,
    args=(here - 1,),
    key="rp_prev",
    disabled=here <= 0,
)
nav.button(
    "Next card",
    icon=":material/chevron_right:",
    on_click=go,
    args=(here + 1,),
    key="rp_next",
    disabled=here >= last,
    type="primary",
)
nav.button("End", icon=":material/last_page:", on_click=go, args=(last,), key="rp_last")
nav.selectbox(
    "Jump to round",
    list(starts),
    width=180,
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
for event in timeline.iloc[first : end + 1].to_dict("records"):
    st.markdown(f"- {replay.describe(event, vengeance)}")
with st.container(border=True):
    for seat in replay.board(timeline, seats, end):
        st.markdown(replay.seat_line(seat))
    st.caption("Cards by kind: " + replay.legend())

# One under the other: side by side, both were too narrow to read in a small window.
st.subheader("Game totals by round")
totals = replay.totals_by_round(timeline, seats, current_round)
st.altair_chart(charts.game_totals(totals), width="stretch")
st.caption(
    "Points after each round, from the logged round scores; the big dots mark the round on screen."
)
st.subheader("Every event so far (newest first)")
log = replay.log_frame(timeline.iloc[: end + 1], vengeance)
# As tall as its rows up to 320 px: no blank filler rows under a short log.
st.dataframe(
    log,
    hide_index=True,
    height=replay.table_height(len(log)),
    column_config={
        "round": st.column_config.NumberColumn("round", format="%d", width="small"),
        "seq": st.column_config.NumberColumn("seq", format="%d", width="small"),
        "event": st.column_config.TextColumn("event", width="large"),
    },
)
