"""OpenSSL's ML-DSA-65 (through PyPI `cryptography`) for the operations of cipher-bench's
`mldsa65.*` benchmarks, so that Benchmarks/compare.py can time both in one run.

`benchmarks()` returns (op name, callable that performs one operation) pairs:
- mldsa65.keygen: generate a fresh key pair.
- mldsa65.sign: sign a 200-byte message with an already loaded private key (hedged, empty context).
- mldsa65.verify: load the 1952-byte raw public key and verify a signature of that message.
"""
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA65PrivateKey, MLDSA65PublicKey

LABEL = "OpenSSL (cryptography)"


def benchmarks():
    message = bytes((i * 7) & 0xFF for i in range(200))
    key = MLDSA65PrivateKey.from_seed_bytes(bytes([0x42]) * 32)
    public_bytes = key.public_key().public_bytes_raw()
    signature = key.sign(message)

    def keygen():
        MLDSA65PrivateKey.generate()

    def sign():
        key.sign(message)

    def verify():
        MLDSA65PublicKey.from_public_bytes(public_bytes).verify(signature, message)

    return [
        ("mldsa65.keygen", keygen),
        ("mldsa65.sign", sign),
        ("mldsa65.verify", verify),
    ]


if __name__ == "__main__":
    import timeit

    for name, run in benchmarks():
        runs = 200
        best = min(timeit.repeat(run, number=runs, repeat=7)) / runs
        print(f"{name:28s}{best * 1e6:10.2f} µs")
