"""A Python-built owner device against a running cipher-station-emulator: the flow a real client
runs, with the libraries real stations and clients use (kyber-py, dilithium-py, PyNaCl) and only
the standard library for HTTP.

Request:  {"station": "http://127.0.0.1:<port>", "log": "<path of the emulator's log file>"}
Response: {"steps": [<step names that passed>], "cid": <post cid>, "error": <text or null>}

Steps: read /profile; pair (the PIN read back from the log with the tray app's pattern); post a
SecretBox-encrypted file with encrypted metadata and a self_envelope sealed to the station's
ML-KEM key, signing the exact multipart body; rewrap and open the envelope with the device's
ML-KEM key; fetch /content/<cid> and decrypt it; read the manifest and decrypt the metadata;
check the envelopes document; and send one bad signature, which must get 401 "bad auth".
"""
import base64
import hashlib
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

from dilithium_py.ml_dsa import ML_DSA_65
from kyber_py.ml_kem import ML_KEM_768
from nacl.secret import SecretBox


def http(method, url, body=b"", headers=None):
    request = urllib.request.Request(url, data=body if method != "GET" else None, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def wrap_key(shared_secret):
    return hashlib.blake2b(shared_secret, digest_size=32, person=b"orbit-kem").digest()


def seal(ek, key):
    ss, ct = ML_KEM_768.encaps(ek)
    return (len(ct).to_bytes(2, "big") + ct + bytes(SecretBox(wrap_key(ss)).encrypt(key))).hex()


def open_envelope(dk, envelope_hex):
    raw = bytes.fromhex(envelope_hex)
    length = int.from_bytes(raw[:2], "big")
    ss = ML_KEM_768.decaps(dk, raw[2:2 + length])
    return SecretBox(wrap_key(ss)).decrypt(raw[2 + length:])


class Device:
    def __init__(self, station, uid, device_uid, sk):
        self.station, self.uid, self.device_uid, self.sk = station, uid, device_uid, sk

    def send(self, method, path, body=b"", content_type=None, tamper=False):
        ts = str(int(time.time()))
        nonce = os.urandom(16).hex()
        digest = hashlib.sha256(body).hexdigest()
        canonical = "\n".join([method, path, self.uid, self.device_uid, ts, nonce, digest]).encode()
        signature = ML_DSA_65.sign(self.sk, canonical)
        if tamper:
            signature = bytes([signature[0] ^ 1]) + signature[1:]
        headers = {"x-cipher-uid": self.uid, "x-cipher-device": self.device_uid, "x-cipher-ts": ts, "x-cipher-nonce": nonce,
                   "x-cipher-body-sha256": digest, "x-cipher-sig": base64.b64encode(signature).decode()}
        if content_type:
            headers["Content-Type"] = content_type
        return http(method, self.station + path, body, headers)


def multipart(fields, boundary):
    out = b""
    for name, value, filename in fields:
        out += f"--{boundary}\r\n".encode()
        if filename:
            out += f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'.encode()
            out += b"Content-Type: application/octet-stream\r\n\r\n"
        else:
            out += f'Content-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        out += value + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


def run(request):
    station, log = request["station"], request["log"]
    steps = []

    status, _, body = http("GET", station + "/profile")
    assert status == 200, (status, body)
    profile = json.loads(body)
    uid, station_ek = profile["uid"], bytes.fromhex(profile["mlkem_public_key"])
    assert len(station_ek) == 1184
    steps.append("profile")

    ek, dk = ML_KEM_768.keygen()
    pk, sk = ML_DSA_65.keygen()
    device_uid = "python-owner-" + os.urandom(4).hex()
    start = json.dumps({"device_uid": device_uid, "mlkem_public_key": ek.hex(), "mldsa_public_key": pk.hex()}).encode()
    status, _, body = http("POST", station + "/delegate/start", start, {"Content-Type": "application/json"})
    assert status == 200, (status, body)
    pairing_id = json.loads(body)["pairing_id"]
    pins = []
    for _ in range(50):
        with open(log, encoding="utf-8") as handle:
            pins = re.findall(r"PAIRING PIN:\s*(\d{4,8})", handle.read())
        if pins:
            break
        time.sleep(0.1)
    assert pins, "no PIN in the log"
    confirm = json.dumps({"pairing_id": pairing_id, "pin": pins[-1]}).encode()
    status, _, body = http("POST", station + "/delegate/confirm", confirm, {"Content-Type": "application/json"})
    assert status == 200, (status, body)
    confirmed = json.loads(body)
    assert confirmed == {"status": "ok", "action": "delegate_added", "uid": uid, "device_uid": device_uid}, confirmed
    steps.append("pair")
    device = Device(station, uid, device_uid, sk)

    key = os.urandom(32)
    plaintext = os.urandom(300_000)  # two 256 KiB chunks once encrypted
    metadata = {"caption": "from python", "n": 1}
    boundary = "python-" + os.urandom(8).hex()
    form = multipart([
        ("file", bytes(SecretBox(key).encrypt(plaintext)), "blob.bin"),
        ("metadata", bytes(SecretBox(key).encrypt(json.dumps(metadata, separators=(",", ":")).encode())).hex().encode(), None),
        ("client", b"interop", None),
        ("audience_mode", b"self", None),
        ("self_envelope", seal(station_ek, key).encode(), None),
    ], boundary)
    status, _, body = device.send("POST", "/post", form, "multipart/form-data; boundary=" + boundary)
    assert status == 200, (status, body)
    posted = json.loads(body)
    assert list(posted) == ["status", "cid", "envelopes_cid", "audience_mode", "audience_uids", "followers_raw", "followers_used",
                            "manifest_posts"], posted
    cid = posted["cid"]
    steps.append("post")

    rewrap = json.dumps({"uid": uid, "device_uid": device_uid, "post_cid": cid, "envelopes_cid": None}).encode()
    status, _, body = device.send("POST", "/rewrap", rewrap, "application/json")
    assert status == 200, (status, body)
    result = json.loads(body)["result"]
    assert result["status"] == "rewrap_ok", result
    assert open_envelope(dk, result["envelope"]) == key
    steps.append("rewrap-open")

    status, headers, body = device.send("GET", "/content/" + cid)
    assert status == 200, (status, body)
    assert SecretBox(key).decrypt(body) == plaintext
    assert headers.get("ETag", headers.get("etag")) == '"' + cid + '"'
    steps.append("content-decrypt")

    status, _, body = http("GET", station + "/profile")
    manifest_cid = json.loads(body)["manifest_cid"]
    status, _, raw_manifest = device.send("GET", "/content/" + manifest_cid)
    assert status == 200, (status, raw_manifest)
    manifest = json.loads(raw_manifest)
    # Compact, as json.dumps(separators=(",", ":"), ensure_ascii=False) writes it.
    assert json.dumps(manifest, separators=(",", ":"), ensure_ascii=False).encode() == raw_manifest
    entry = manifest["clients"]["interop"]["posts"][-1]
    assert entry["post_cid"] == cid and "encrypted" not in entry
    assert json.loads(SecretBox(key).decrypt(bytes.fromhex(entry["metadata"]))) == metadata
    steps.append("manifest-metadata")

    status, _, raw_envelopes = device.send("GET", "/content/" + entry["envelopes_cid"])
    envelopes = json.loads(raw_envelopes)
    assert list(envelopes) == ["v", "post_cid", "envelopes"] and list(envelopes["envelopes"]) == [uid], envelopes
    assert envelopes["envelopes"][uid].startswith("0440") and len(envelopes["envelopes"][uid]) == 2324
    steps.append("envelopes")

    status, _, body = device.send("GET", "/followers", tamper=True)
    assert status == 401 and body == b'{"detail":"bad auth"}', (status, body)
    steps.append("bad-signature")
    return {"steps": steps, "cid": cid, "error": None}


request = json.load(sys.stdin)
try:
    outcome = run(request)
except AssertionError as failure:
    outcome = {"steps": [], "cid": None, "error": "assertion failed: " + repr(failure.args)[:2000]}
json.dump(outcome, sys.stdout)
