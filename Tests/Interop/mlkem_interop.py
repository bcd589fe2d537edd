"""Python half of MLKEMInteropTests, using kyber-py (what Cipher Stations run).

Request {"op": "generate", "swift_eks": [hex]}:
  makes one kyber-py key pair per Swift key, encapsulates to each Swift key, and to its own key.
Request {"op": "decapsulate", "items": [{"dk": hex, "c": hex}]}:
  decapsulates each ciphertext with kyber-py (implicit rejection included).
"""
import json
import sys

from kyber_py.ml_kem import ML_KEM_768

request = json.load(sys.stdin)
if request["op"] == "generate":
    out = {"py_keys": [], "to_swift": []}
    for ek_hex in request["swift_eks"]:
        key, c = ML_KEM_768.encaps(bytes.fromhex(ek_hex))
        out["to_swift"].append({"c": c.hex(), "k": key.hex()})
        ek, dk = ML_KEM_768.keygen()
        own_key, own_c = ML_KEM_768.encaps(ek)
        out["py_keys"].append({"ek": ek.hex(), "dk": dk.hex(), "c": own_c.hex(), "k": own_key.hex()})
    json.dump(out, sys.stdout)
elif request["op"] == "decapsulate":
    json.dump([ML_KEM_768.decaps(bytes.fromhex(i["dk"]), bytes.fromhex(i["c"])).hex() for i in request["items"]], sys.stdout)
else:
    sys.exit("unknown op")
