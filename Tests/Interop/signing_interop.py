"""Python half of the Signing interop tests: the station's request checks (cipher_station/auth.py
as run by uvicorn + Starlette) rebuilt from dilithium-py, hashlib and the standard library.

Request (every list optional):
  "verify":  [{"method", "target", "headers": {name: value}, "body": {"key": hex, "length": n}, "pk": hex}]
             -> [{"ok", "body_hash_ok", "path", "canonical"}]; the body is regenerated on this side
             as the XSalsa20 keystream SecretBox(key).encrypt(zeros(n), zero nonce)[40:]
  "sign":    [{"sk": hex 4032 B, "canonical": text}] -> base64 ML-DSA-65 signatures (dilithium-py)
  "paths":   [request target] -> the path the station signs over
  "ints":    [text] -> int(text) as a string, or null when int() raises
  "base64":  [text] -> hex of base64.b64decode(text, validate=True), or null when it raises
  "fromhex": [text] -> hex of bytes.fromhex(text), or null when it raises
"""
import base64
import hashlib
import json
import sys
from urllib.parse import unquote, urlsplit

from dilithium_py.ml_dsa import ML_DSA_65
from nacl.secret import SecretBox


def station_path(target):
    # uvicorn: split off the query, percent-decode; Starlette: rebuild the URL and read .path.
    raw_path, _, query = target.partition("?")
    path = unquote(raw_path)
    url = "http://testserver" + path + ("?" + query if query else "")
    return urlsplit(url).path


def body_bytes(spec):
    if spec["length"] == 0:
        return b""
    box = SecretBox(bytes.fromhex(spec["key"])).encrypt(bytes(spec["length"]), bytes(24))
    return bytes(box)[40:]


def verify(case):
    headers = {name.lower(): value for name, value in case["headers"].items()}
    body = body_bytes(case["body"])
    body_hash_ok = hashlib.sha256(body).hexdigest() == headers["x-cipher-body-sha256"].lower()
    canonical = "\n".join([
        case["method"].upper(), station_path(case["target"]), headers["x-cipher-uid"], headers["x-cipher-device"],
        headers["x-cipher-ts"], headers["x-cipher-nonce"], headers["x-cipher-body-sha256"].lower(),
    ])
    signature = base64.b64decode(headers["x-cipher-sig"], validate=True)
    ok = bool(ML_DSA_65.verify(bytes.fromhex(case["pk"]), canonical.encode("utf-8"), signature))
    return {"ok": ok, "body_hash_ok": body_hash_ok, "path": station_path(case["target"]), "canonical": canonical}


def attempt(function):
    try:
        return function()
    except Exception:
        return None


request = json.load(sys.stdin)
json.dump({
    "verified": [verify(case) for case in request.get("verify", [])],
    "signatures": [
        base64.b64encode(ML_DSA_65.sign(bytes.fromhex(case["sk"]), case["canonical"].encode("utf-8"))).decode()
        for case in request.get("sign", [])
    ],
    "paths": [station_path(target) for target in request.get("paths", [])],
    "ints": [attempt(lambda: str(int(text))) for text in request.get("ints", [])],
    "base64": [attempt(lambda: base64.b64decode(text, validate=True).hex()) for text in request.get("base64", [])],
    "fromhex": [attempt(lambda: bytes.fromhex(text).hex()) for text in request.get("fromhex", [])],
}, sys.stdout)
