"""Python half of EnvelopeInteropTests: the station's KEM-DEM envelope built from kyber-py,
hashlib and PyNaCl (cipher_station/pqcrypto.py seal_key / open_key, as the station runs it with
CIPHER_PQC_BACKEND=python).

Request (every list optional):
  "open":     [{"dk": hex 2400 B, "envelope": hex}]            -> post key hex, or null on failure
  "seal":     [{"ek": hex 1184 B, "post_key": hex}]             -> envelope hex (fresh encaps, fresh nonce)
  "assemble": [{"ct", "ss", "post_key", "nonce": hex}]          -> envelope hex, deterministic
"""
import hashlib
import json
import sys

from kyber_py.ml_kem import ML_KEM_768
from nacl.secret import SecretBox


def wrap_key(shared_secret):
    return hashlib.blake2b(shared_secret, digest_size=32, person=b"orbit-kem").digest()


def assemble(ct, ss, post_key, nonce=None):
    sealed = SecretBox(wrap_key(ss)).encrypt(post_key, nonce) if nonce else SecretBox(wrap_key(ss)).encrypt(post_key)
    return (len(ct).to_bytes(2, "big") + ct + bytes(sealed)).hex()


def seal(ek, post_key):
    ss, ct = ML_KEM_768.encaps(ek)  # kyber-py returns (shared_secret, ciphertext)
    return assemble(ct, ss, post_key)


def open_envelope(dk, envelope_hex):
    try:
        raw = bytes.fromhex(envelope_hex)
        ct_len = int.from_bytes(raw[:2], "big")
        ct = raw[2:2 + ct_len]
        if len(ct) != ct_len:
            raise ValueError("truncated KEM ciphertext")
        ss = ML_KEM_768.decaps(dk, ct)
        return SecretBox(wrap_key(ss)).decrypt(raw[2 + ct_len:]).hex()
    except Exception:
        return None


request = json.load(sys.stdin)
json.dump({
    "opened": [open_envelope(bytes.fromhex(c["dk"]), c["envelope"]) for c in request.get("open", [])],
    "sealed": [seal(bytes.fromhex(c["ek"]), bytes.fromhex(c["post_key"])) for c in request.get("seal", [])],
    "assembled": [
        assemble(bytes.fromhex(c["ct"]), bytes.fromhex(c["ss"]), bytes.fromhex(c["post_key"]), bytes.fromhex(c["nonce"]))
        for c in request.get("assemble", [])
    ],
}, sys.stdout)
