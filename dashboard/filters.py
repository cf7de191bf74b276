"""The sidebar filters every page shares: ruleset, variant, run and policies.

The router (app.py) draws them once per rerun, before the page runs, so a choice survives
switching pages (Streamlit keeps the state of widgets drawn by the entry point). Ruleset,
variant and run are also bound to the URL (`?run=NAME`), so a link opens the same view. Pages
read the choice with `current()`. The run list comes from `data.runs`; nothing here computes a
number.
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


def run_label(row: dict[str, Any]) -> str:
    """A run's status and size, shown under the picker."""
    return (
        f"{row['status']}: {int(row['games']):,} games; ruleset {row['ruleset']}, "
        f"variant {row['variant']}"
    )


class UnknownInUrl(ValueError):
    """A link names a ruleset, variant or run the lake does not hold."""


def check_url(runs: pd.DataFrame) -> None:
    """Raise UnknownInUrl when the URL names a run (or ruleset, variant) that is not in the
    lake: Streamlit would silently show the first one instead, a different view than the link's."""
    for key in ("ruleset", "variant", "run"):
        wanted = st.query_params.get(key)
        if wanted is None or (key != "run" and wanted == ALL):
            continue
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
        _choices(runs["ruleset"]),
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
        shown = shown[shown["ruleset"] == ruleset]
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
    filters = Filters(root, run, info, tuple(picked) or all_policies, all_policies)
    st.session_state[_STATE_KEY] = filters
    return filters


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
