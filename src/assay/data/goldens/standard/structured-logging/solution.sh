#!/usr/bin/env bash
# Reference solution: a module logger; ids at INFO, failures at WARNING/ERROR, the recipient
# and subject only at DEBUG; a test that no print() is left in src/worker.py.
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

path = Path("src/worker.py")
text = path.read_text(encoding="utf-8")
pairs = [
    ("from collections.abc import Callable, Iterable\nfrom dataclasses import dataclass\n",
     "import logging\nfrom collections.abc import Callable, Iterable\nfrom dataclasses import dataclass\n\n"
     "logger = logging.getLogger(__name__)\n"),
    ('        print(f"sending job {job.id} to {job.to}: {job.subject}")\n',
     '        logger.info("sending job %s", job.id)\n'
     '        logger.debug("job %s: to %s, subject %r", job.id, job.to, job.subject)\n'),
    ('                print(f"job {job.id} attempt {attempt} failed: {exc}")\n',
     '                logger.warning("job %s attempt %d failed: %s", job.id, attempt, exc.strerror or exc)\n'),
    ('                print(f"sent job {job.id}")\n', '                logger.info("sent job %s", job.id)\n'),
    ('            print(f"giving up on job {job.id}")\n',
     '            logger.error("giving up on job %s", job.id)\n'),
]
for old, new in pairs:
    assert text.count(old) == 1, f"src/worker.py is not the fixture's: {old!r}"
    text = text.replace(old, new)
path.write_text(text, encoding="utf-8")
PY
cat >> tests/test_worker.py <<'PY'


def test_no_print_left_in_the_worker():
    import ast
    from pathlib import Path

    tree = ast.parse(Path(__file__).resolve().parents[1].joinpath("src", "worker.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "print"]
    assert calls == [], f"print() on line(s) {[c.lineno for c in calls]}"
PY
echo "src/worker.py logs through logging.getLogger(__name__), ids only at INFO; a test checks no print() is left."
