"""What the lsp plugin costs: a server's start, one warm request, and the wait an edit gets.

Against a real language server (``pylsp`` from the dev dependencies; ``--server pyright`` for
``pyright-langserver`` on ``PATH``), in-process through the plugin's :class:`Servers`:

* cold: start the server, open the file and answer one ``goToDefinition``;
* warm: one ``goToDefinition`` more (median of ``--runs``);
* diagnostics: a changed file sent and its diagnostics received — what each ``write_file`` /
  ``edit_file`` waits (median of ``--runs``).

    uv run python bench/bench_lsp.py [--runs 20] [--server pylsp|pyright]
"""

from __future__ import annotations

import shutil
import statistics
import sys
from pathlib import Path

from common import bench_dir, bench_options, timed_call
from mycode_lsp.operations import run_operation
from mycode_lsp.servers import Servers
from mycode_lsp.specs import parse_spec

SOURCE = "def total(values):\n    return sum(values)\n\n\nprint(total([1, 2]))\n"


def main() -> None:
    """Print the three figures."""
    options = bench_options(__doc__, runs=20, server="pylsp")
    if options.server == "pyright":
        command, args = shutil.which("pyright-langserver"), ["--stdio"]
    else:
        command, args = str(Path(sys.executable).with_name("pylsp")), []
    if not command or not Path(command).exists():
        raise SystemExit(f"{options.server} is not installed")
    root = bench_dir("lsp")
    app = root / "app.py"
    app.write_text(SOURCE)
    entry = {"command": command, "args": args, "extensionToLanguage": {".py": "python"}}
    servers = Servers([parse_spec(options.server, entry, "bench")], root, root / "logs")

    def definition() -> str:
        return run_operation(servers, "goToDefinition", app, 5, 8, "", timeout=60)

    try:
        cold, answer = timed_call(definition)
        assert answer.startswith("app.py:1:5"), answer
        warm = [timed_call(definition)[0] for _ in range(options.runs)]
        waits = []
        for i in range(options.runs):
            app.write_text(SOURCE + f"x{i} = undefined_{i}\n")
            seconds, found = timed_call(lambda: servers.diagnostics(app, 30.0))
            assert found, "no diagnostics arrived"
            waits.append(seconds)
    finally:
        servers.close()
    name = options.server
    print(f"{name}: cold start + first goToDefinition  {cold * 1000:8.1f} ms")
    print(f"{name}: warm goToDefinition (median)        {statistics.median(warm) * 1000:8.1f} ms")
    print(f"{name}: diagnostics after an edit (median)  {statistics.median(waits) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
