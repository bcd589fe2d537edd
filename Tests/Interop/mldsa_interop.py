"""Python half of MLDSAInteropTests: dilithium-py (what stations run) against the Swift ML-DSA-65.

One JSON request on stdin, one JSON answer on stdout:
- {"op": "keygen_and_sign", "keys": n, "messages": [hex]}: generates n key pairs and signs message i
  (hedged, empty context) with key i mod n. Answers {"keys": [{"pk", "sk"}], "signatures": [hex]}.
- {"op": "verify", "publicKeys": [hex], "cases": [{"key", "msg", "sig"}]}: verifies each case
  (empty context) and answers [bool].
The work is spread over all CPUs, because pure-Python ML-DSA takes tens of milliseconds per call.
"""
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

from dilithium_py.ml_dsa import ML_DSA_65


def sign(job):
    sk, message = job
    return ML_DSA_65.sign(bytes.fromhex(sk), bytes.fromhex(message)).hex()


def verify(job):
    pk, message, signature = job
    return ML_DSA_65.verify(bytes.fromhex(pk), bytes.fromhex(message), bytes.fromhex(signature))


def run(request, mapper):
    if request["op"] == "keygen_and_sign":
        keys = [ML_DSA_65.keygen() for _ in range(request["keys"])]
        jobs = [(keys[i % len(keys)][1].hex(), message) for i, message in enumerate(request["messages"])]
        signatures = list(mapper(sign, jobs))
        return {"keys": [{"pk": pk.hex(), "sk": sk.hex()} for pk, sk in keys], "signatures": signatures}
    if request["op"] == "verify":
        keys = request["publicKeys"]
        jobs = [(keys[case["key"]], case["msg"], case["sig"]) for case in request["cases"]]
        return list(mapper(verify, jobs))
    raise SystemExit(f"unknown op {request['op']}")


def main():
    request = json.load(sys.stdin)
    workers = max(1, os.cpu_count() or 1)
    try:
        pool = ProcessPoolExecutor(max_workers=workers)
    except (OSError, ImportError, NotImplementedError):
        pool = None  # no process support (e.g. no /dev/shm): run in this process
    if pool is None:
        answer = run(request, map)
    else:
        with pool:
            answer = run(request, lambda function, jobs: pool.map(function, jobs, chunksize=4))
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
