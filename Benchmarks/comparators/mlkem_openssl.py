"""ML-KEM-768 on OpenSSL (through PyPI `cryptography`), the same operations as cipher-bench."""
from cryptography.hazmat.primitives.asymmetric import mlkem

LABEL = "OpenSSL (cryptography)"


def benchmarks():
    private_key = mlkem.MLKEM768PrivateKey.generate()
    raw_public = private_key.public_key().public_bytes_raw()
    _, ciphertext = private_key.public_key().encapsulate()

    def encaps():
        mlkem.MLKEM768PublicKey.from_public_bytes(raw_public).encapsulate()

    return [
        ("mlkem768.keygen", mlkem.MLKEM768PrivateKey.generate),
        ("mlkem768.encaps", encaps),
        ("mlkem768.decaps", lambda: private_key.decapsulate(ciphertext)),
    ]
