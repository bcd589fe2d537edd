"""Python half of the ClassicalCrypto interop tests: PyNaCl's SecretBox and Argon2, hashlib's BLAKE2b and
SHA-256, for every case in the JSON request on stdin (see SodiumInteropRequest in SecretBoxTests)."""
import hashlib
import json
import sys

from nacl import pwhash
from nacl.secret import SecretBox

request = json.load(sys.stdin)

opened = [
    SecretBox(bytes.fromhex(case["key"])).decrypt(bytes.fromhex(case["sealed"])).hex()
    for case in request.get("secretboxOpen", [])
]
sealed = [
    bytes(SecretBox(bytes.fromhex(case["key"])).encrypt(bytes.fromhex(case["message"]))).hex()
    for case in request.get("secretboxSeal", [])
]
blake2b = [
    hashlib.blake2b(
        bytes.fromhex(case["data"]),
        digest_size=case["digestSize"],
        key=bytes.fromhex(case["key"]),
        salt=bytes.fromhex(case["salt"]),
        person=bytes.fromhex(case["person"]),
    ).hexdigest()
    for case in request.get("blake2b", [])
]
sha256 = [hashlib.sha256(bytes.fromhex(data)).hexdigest() for data in request.get("sha256", [])]
argon2 = []
for case in request.get("argon2", []):
    kdf = pwhash.argon2id.kdf if case["variant"] == "argon2id" else pwhash.argon2i.kdf
    argon2.append(kdf(
        case["size"], bytes.fromhex(case["password"]), bytes.fromhex(case["salt"]),
        opslimit=case["operations"], memlimit=case["memory"],
    ).hex())

json.dump({
    "secretboxOpened": opened,
    "secretboxSealed": sealed,
    "blake2b": blake2b,
    "sha256": sha256,
    "argon2": argon2,
}, sys.stdout)
