"""Python half of MetadataDateTests: how Python clients write metadata dates, and how they read
the SDK's.

Input: {"swift": [<metadata JSON text written by the SDK>...]}.
Output: {"written": [<metadata JSON text as Python clients write it>...],
         "read": [{"type": <JSON type name of created_at>, "utc": <ISO-8601 UTC of created_at>}...]}
"""
import json
import sys
from datetime import datetime, timedelta, timezone

request = json.load(sys.stdin)
new_year = datetime(2024, 1, 1, tzinfo=timezone.utc)

written = [
    # PROTOCOL.md's ciphervault metadata: integer Unix seconds (the station's own int(time.time())).
    json.dumps({"filename": "report.pdf", "created_at": int(new_year.timestamp())}),
    # time.time() as is: fractional Unix seconds.
    json.dumps({"filename": "report.pdf", "created_at": new_year.timestamp() + 0.5}),
    # datetime.isoformat() with an offset and microseconds.
    json.dumps({"filename": "report.pdf",
                "created_at": (new_year + timedelta(seconds=0.5)).astimezone(timezone(timedelta(hours=1))).isoformat()}),
    # JavaScript's Date.toISOString().
    json.dumps({"filename": "report.pdf", "created_at": "2024-01-01T00:00:00.500Z"}),
]

read = []
for text in request["swift"]:
    value = json.loads(text)["created_at"]
    read.append({"type": type(value).__name__,
                 "utc": datetime.fromtimestamp(value, tz=timezone.utc).isoformat()})

json.dump({"written": written, "read": read}, sys.stdout)
