"""The dashboard's server process: Streamlit's own command line, plus a thread that opens the lake.

`flip7 dashboard` runs `python -m dashboard.serve run dashboard/app.py --server.port ...`: the
arguments of `streamlit run`, handed to Streamlit's command line in this same process. Before
that, one daemon thread imports what the pages need (pandas, pyarrow, DuckDB, Altair: seconds
on a small machine, otherwise paid by the first browser session) and opens the warehouse of
$FLIP7_DATA with the first page's marts (`data.prepare(root, data.FIRST_PAGE)`: loaded from
the mart cache, else computed and stored there). A browser that connects while Streamlit is
starting, or soon after, finds them ready; one that connects sooner waits for the same work,
not for it twice (the warehouse's lock). Nothing here changes what a page shows.
"""

from __future__ import annotations

import sys
import threading


def warm() -> None:
    """Import the pages' libraries and open the lake with the first page's marts."""
    try:
        import altair  # noqa: F401
        import pandas  # noqa: F401

        from dashboard import charts, data, filters, tables  # noqa: F401

        root = data.data_root()
        if not data.is_empty(root):
            data.prepare(root, data.FIRST_PAGE)
    except Exception:  # noqa: BLE001  # the first page opens it again and says what is wrong
        return


def main(argv: list[str] | None = None) -> None:
    """Start `warm` in the background, then run Streamlit's command line with `argv`."""
    threading.Thread(target=warm, name="flip7-warm", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
