"""`mhgraph` with a pause at one document's write, for tests/test_documents.py to kill with SIGKILL.

KILL_MODE=between: the KILL_AT-th document written pauses before its transaction does anything;
KILL_MODE=during: it pauses inside its transaction, after the old version was removed and the new
one written, before the commit. At the pause the process writes KILL_FLAG and sleeps.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from mhgraph.cli import main
from mhgraph.ingest.writer import GraphWriter

MODE, AT, FLAG = os.environ["KILL_MODE"], int(os.environ["KILL_AT"]), Path(os.environ["KILL_FLAG"])
write_document = GraphWriter._write_document
started = 0


def pausing(self, tx, doc):
    global started
    started += 1
    if MODE == "between" and started == AT:
        FLAG.write_text("paused")
        time.sleep(3600)
    removal = write_document(self, tx, doc)
    if MODE == "during" and started == AT:
        FLAG.write_text("paused")
        time.sleep(3600)
    return removal


GraphWriter._write_document = pausing

if __name__ == "__main__":
    sys.argv[0] = "mhgraph"
    main()
