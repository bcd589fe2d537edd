"""Python half of KeccakTests.matchesHashlib: hashlib's SHA-3/SHAKE for each case on stdin."""
import hashlib
import json
import sys

out = []
for case in json.load(sys.stdin):
    data = bytes.fromhex(case["data"])
    n = case["outLen"]
    out.append({
        "sha3_256": hashlib.sha3_256(data).hexdigest(),
        "sha3_512": hashlib.sha3_512(data).hexdigest(),
        "shake128": hashlib.shake_128(data).hexdigest(n) if n else "",
        "shake256": hashlib.shake_256(data).hexdigest(n) if n else "",
    })
json.dump(out, sys.stdout)
