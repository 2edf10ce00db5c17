"""``assay view``: a local web app over the project's saved runs (a JSON API and the packaged
front end), served by the standard library's threading HTTP server. See docs/viewer.md.

Names resolve on first use (PEP 562): a gate run that only keeps its live progress file does not
import the HTTP server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from assay._lazy import exports_by_module, lazy_exports

if TYPE_CHECKING:
    from assay.viewer._live import AgentProgress, CallProgress, LiveRun, live_run, live_runs
    from assay.viewer._runs import RUN_ID, NoRun, RunStore
    from assay.viewer._server import ViewerApp, make_server, serve, url_of

_EXPORTS: Final = exports_by_module(
    {
        "_live": "AgentProgress CallProgress LiveRun live_run live_runs",
        "_runs": "RUN_ID NoRun RunStore",
        "_server": "ViewerApp make_server serve url_of",
    }
)

__all__ = [
    "RUN_ID",
    "AgentProgress",
    "CallProgress",
    "LiveRun",
    "NoRun",
    "RunStore",
    "ViewerApp",
    "live_run",
    "live_runs",
    "make_server",
    "serve",
    "url_of",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
