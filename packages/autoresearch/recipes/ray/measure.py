# The Ray job of the recipe: it scores solution.py (the file the proposer changes) and prints
# one JSON line. It runs on a Ray worker, in a copy of the candidate's worktree.
import json
import os
import socket

import solution

slot = os.environ.get("AUTORESEARCH_SLOT", "")
print(f"measuring on {socket.gethostname()} in slot {slot}", flush=True)
print(json.dumps({"score": float(solution.score()), "slot": slot}), flush=True)
