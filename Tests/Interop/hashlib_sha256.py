"""Python half of PublicKeyFingerprintTests.sha256MatchesHashlib: hashlib's SHA-256 of each hex input."""
import hashlib
import json
import sys

json.dump([hashlib.sha256(bytes.fromhex(data)).hexdigest() for data in json.load(sys.stdin)], sys.stdout)
