"""The ClassicalCrypto, Envelope and Signing operations of cipher-bench as a Python station or client does
them: PyNaCl (libsodium) for SecretBox, hashlib for BLAKE2b and SHA-256, kyber-py and
dilithium-py for ML-KEM-768 and ML-DSA-65. Streamed SecretBox has no PyNaCl counterpart (PyNaCl
seals only whole messages in memory), so those ops have no comparator."""
import hashlib
import os

from dilithium_py.ml_dsa import ML_DSA_65
from kyber_py.ml_kem import ML_KEM_768
from nacl.secret import SecretBox

LABEL = "PyNaCl/hashlib, kyber-py/dilithium-py"


def _wrap_key(shared_secret):
    return hashlib.blake2b(shared_secret, digest_size=32, person=b"orbit-kem").digest()


def benchmarks():
    ek, dk = ML_KEM_768.keygen()
    post_key = os.urandom(32)

    def seal():
        shared_secret, ciphertext = ML_KEM_768.encaps(ek)
        sealed = SecretBox(_wrap_key(shared_secret)).encrypt(post_key)
        return (len(ciphertext).to_bytes(2, "big") + ciphertext + sealed).hex()

    envelope = seal()

    def open_envelope():
        raw = bytes.fromhex(envelope)
        length = int.from_bytes(raw[:2], "big")
        shared_secret = ML_KEM_768.decaps(dk, raw[2:2 + length])
        return SecretBox(_wrap_key(shared_secret)).decrypt(raw[2 + length:])

    _, sk = ML_DSA_65.keygen()
    small_body, large_body = os.urandom(1 << 10), os.urandom(1 << 20)

    def sign(body, path):
        def run():
            canonical = "\n".join([
                "POST", path, "da27af3e-b2ac-4d02-a894-3c22d638d1ba", "bench-device-990dcf48", "1795956595",
                os.urandom(16).hex(), hashlib.sha256(body).hexdigest(),
            ])
            return ML_DSA_65.sign(sk, canonical.encode("utf-8"))
        return run

    key, nonce = os.urandom(32), os.urandom(24)
    box = SecretBox(key)
    one_mib, sixty_four_mib = os.urandom(1 << 20), os.urandom(64 << 20)
    sealed_64 = box.encrypt(sixty_four_mib, nonce)

    return [
        ("envelope.seal", seal),
        ("envelope.open", open_envelope),
        ("signing.sign.1KiB", sign(small_body, "/rewrap")),
        ("signing.sign.1MiB", sign(large_body, "/post")),
        ("secretbox.seal.1MiB", lambda: box.encrypt(one_mib, nonce)),
        ("secretbox.oneshot.64MiB", lambda: box.encrypt(sixty_four_mib, nonce)),
        ("secretbox.oneshotopen.64MiB", lambda: box.decrypt(sealed_64)),
    ]
