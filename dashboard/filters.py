"""The sidebar filters every page shares: ruleset, variant, run and policies.

The router (app.py) draws them once per rerun, before the page runs, so a choice survives
switching pages (Streamlit keeps the state of widgets drawn by the entry point). Ruleset,
variant and run are also bound to the URL (`?run=NAME`), so a link opens the same view. Pages
read the choice with `current()`. The run list comes from `data.runs`; nothing here computes a
number. A run may play its line-ups under several rulesets (one cell per line-up, field size
and ruleset): the Ruleset filter then picks the rules the per-run pages show (or, at "all", a
picker for the run's rulesets appears under the run), and pages keep those rows with
`Filters.keep`, so no chart pools two rule choices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import data

ALL = "all"
_STATE_KEY = "flip7_filters"


@dataclass(frozen=True)
class Filters:
    """What the sidebar selected: the data root, one run and its row, some of its policies."""

    root: str
    run: str
    info: dict[str, Any]  # the run's row of `data.runs`
    policies: tuple[str, ...]  # selected policies (all of the run's by default)
    all_policies: tuple[str, ...]
    ruleset: str | None = None  # the rules shown, when the run plays several; else None
    rulesets: tuple[str, ...] = ()  # every ruleset the run plays

    def keep(self, df: pd.DataFrame) -> pd.DataFrame:
        """The rows of `df` (a per-cell query result) under the rules shown: all of them for a
        run of one ruleset or a frame without a ruleset column."""
        if self.ruleset is None or "ruleset" not in df.columns:
            return df
        return df[df["ruleset"] == self.ruleset].reset_index(drop=True)

    @property
    def policy_filter(self) -> tuple[str, ...]:
        """The policies to pass to a query: () when all are selected (no filter)."""
        return () if set(self.policies) == set(self.all_policies) else self.policies


def _choices(values: pd.Series) -> list[str]:
    return [ALL, *sorted({str(v) for v in values.dropna()})]


def _listed(value: Any) -> tuple[str, ...]:
    """A list column's cell (list, numpy array or None) as a tuple of strings."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ()
    return tuple(str(v) for v in value)


def run_rulesets(row: dict[str, Any]) -> tuple[str, ...]:
    """The rulesets a run (its row of `data.runs`) plays: its `rulesets` list, else its one
    `ruleset`."""
    listed = _listed(row.get("rulesets"))
    if listed:
        return listed
    one = row.get("ruleset")
    return () if one is None or (isinstance(one, float) and pd.isna(one)) else (str(one),)


def _all_rulesets(runs: pd.DataFrame) -> list[str]:
    """Every ruleset any run of the lake plays."""
    return sorted({r for row in runs.to_dict("records") for r in run_rulesets(row)})


def run_label(row: dict[str, Any]) -> str:
    """A run's status and size, shown under the picker."""
    rulesets = run_rulesets(row)
    what = f"rulesets {', '.join(rulesets)}" if len(rulesets) > 1 else f"ruleset {row['ruleset']}"
    return f"{row['status']}: {int(row['games']):,} games; {what}, variant {row['variant']}"


class UnknownInUrl(ValueError):
    """A link names a ruleset, variant or run the lake does not hold."""


def check_url(runs: pd.DataFrame) -> None:
    """Raise UnknownInUrl when the URL names a run (or ruleset, variant) that is not in the
    lake: Streamlit would silently show the first one instead, a different view than the link's."""
    for key in ("ruleset", "variant", "run"):
        wanted = st.query_params.get(key)
        if wanted is None or (key != "run" and wanted == ALL):
            continue
        if key == "ruleset":
            known = _all_rulesets(runs)
        else:
            known = sorted({str(v) for v in runs[key].dropna()})
        if wanted not in known:
            raise UnknownInUrl(
                f"The link asks for {key} `{wanted}`, which this lake does not hold; "
                f"its {key}s: {', '.join(f'`{k}`' for k in known)}."
            )


def sidebar(root: str, *, policies: bool = True) -> Filters | None:
    """Draw the filters (the policy picker only when `policies`); None when no run matches them
    (the page then says so). A link naming a run the lake does not hold stops the page with an
    error listing the runs it does hold, each a link."""
    runs = data.runs(root)
    try:
        check_url(runs)
    except UnknownInUrl as exc:
        st.error(str(exc))
        st.markdown(
            "Open one of them: "
            + " · ".join(f"[{r}](?run={r})" for r in (str(x) for x in runs["run"]))
        )
        st.session_state[_STATE_KEY] = None
        st.stop()
    st.sidebar.header("Filters")
    # persist_state="session": a page without these filters (Classic vs Vengeance) does not
    # draw them, and the choice must still be there on the next page that does.
    ruleset = st.sidebar.selectbox(
        "Ruleset",
        [ALL, *_all_rulesets(runs)],
        key="ruleset",
        bind="query-params",
        persist_state="session",
    )
    variant = st.sidebar.selectbox(
        "Variant",
        _choices(runs["variant"]),
        key="variant",
        bind="query-params",
        persist_state="session",
    )
    shown = runs
    if ruleset != ALL:
        shown = shown[[ruleset in run_rulesets(r) for r in shown.to_dict("records")]]
    if variant != ALL:
        shown = shown[shown["variant"] == variant]
    rows = {str(r["run"]): r for r in shown.to_dict("records")}
    if not rows:
        st.sidebar.warning("No run has this ruleset and variant.")
        st.session_state[_STATE_KEY] = None
        return None
    run = st.sidebar.selectbox(
        "Run",
        list(rows),
        key="run",
        bind="query-params",
        persist_state="session",
        help="The newest run first. The choice is in the URL (?run=NAME): a link shows it.",
    )
    info = rows[run]
    st.sidebar.caption(run_label(info))
    rulesets = run_rulesets(info)
    shown_rules = pick_ruleset(run, rulesets, ruleset)
    all_policies = _listed(info.get("policies"))
    picked: list[str] = list(all_policies)
    if policies:
        picked = st.sidebar.multiselect(
            "Policies",
            all_policies,
            default=list(all_policies),
            key=f"f_policies:{run}",  # one widget per run: each run has its own policies
            persist_state="session",
            help="Charts and tables show these policies only (the league and head to head "
            "rank them against everyone they played).",
        )
    reload_button()
    filters = Filters(
        root, run, info, tuple(picked) or all_policies, all_policies, shown_rules, rulesets
    )
    st.session_state[_STATE_KEY] = filters
    return filters


def pick_ruleset(run: str, rulesets: tuple[str, ...], chosen: str) -> str | None:
    """The rules the pages show for a run that plays several rulesets (None for one): the
    Ruleset filter's choice, or at "all" a picker for the run's own rulesets."""
    if len(rulesets) < 2:
        return None
    if chosen != ALL and chosen in rulesets:
        return chosen
    picked: str = st.sidebar.selectbox(
        "Rules shown",
        list(rulesets),
        index=0,
        key=f"f_ruleset:{run}",  # one widget per run: each run has its own rulesets
        persist_state="session",
        help="This run plays its line-ups under several rulesets; the pages show one at a "
        "time (the Rule choices page sets them side by side).",
    )
    return picked


def reload_button() -> None:
    """The sidebar's "Reload the lake" button (every page has it)."""
    if st.sidebar.button("Reload the lake", help="Read shards committed since the page opened"):
        data.reload()
        st.rerun()


def current() -> Filters | None:
    """The filters the sidebar drew in this rerun (None when no run matches)."""
    value: Filters | None = st.session_state.get(_STATE_KEY)
    return value


def require() -> Filters:
    """The current filters; stop the page with a note when no run matches them."""
    filters = current()
    if filters is None:
        st.info("No run matches the filters in the sidebar: choose another ruleset or variant.")
        st.stop()
    return filters


def page(title: str, answers: str) -> Filters:
    """A page over the chosen run: `require`, then its title and what it answers."""
    filters = require()
    st.title(title)
    st.caption(f"Answers: {answers}")
    return filters


def field_size_or_pooled(
    label: str, pooled: str, sizes: list[int], key: str, help: str
) -> int | None:
    """A choice of one field size ("N players") or all of them pooled (`pooled`, the default):
    the size chosen, or None for pooled."""
    choice = st.segmented_control(
        label,
        [pooled, *(f"{n} players" for n in sizes)],
        default=pooled,
        required=True,
        key=key,
        help=help,
    )
    return None if choice == pooled else int(str(choice).split()[0])


def players_at_table(sizes: list[int], key: str, help: str | None = None) -> int:
    """A choice of the field size a page's cells are shown at (the smallest by default)."""
    players = st.segmented_control(
        "Players at the table", sizes, default=sizes[0], required=True, key=key, help=help
    )
    return int(players)
