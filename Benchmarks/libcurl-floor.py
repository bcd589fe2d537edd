#!/usr/bin/env python3
"""libcurl's own CPU cost per request on a kept TLS connection, with no Swift in the process.

This is the floor under `CurlTransport` in a cold listing, where each post costs one signed
`POST /rewrap` (the station's `RewrapMessage` names one `post_cid`, and every signed call needs
a fresh nonce). It runs the `curl` command-line tool (libcurl's own client, the same library
`CurlTransport` links) against the emulator behind `scripts/tls-front.py`, as
`station-client-bench` does, and prints the CPU time the `curl` process spends per request:

  - GET /health, small request and answer;
  - the same with the six `x-cipher-*` headers at their real sizes (the signature header alone is
    4,412 base64 characters; libcurl 7.88 copies every custom header into the request one byte at
    a time through its printf);
  - POST with a 200-byte JSON body and those headers, shaped like a `/rewrap` call.

Each figure is the CPU of `curl` running N requests (one process, one kept connection) minus
that of a run of one request, divided by N - 1, so process start and the TLS handshake drop out.
Cases alternate, and the median of the rounds is printed.

Usage (from the package root, after building the emulator):
  swift build -c release --product cipher-station-emulator
  python3 Benchmarks/libcurl-floor.py [--requests 2000] [--rounds 3]
Needs the `curl` and `openssl` commands (Debian packages curl and openssl).
"""
import argparse
import base64
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"libcurl-floor: {url} did not answer within {seconds} s")


def pin_of(certificate):
    """The sha256// public-key pin of a PEM certificate, as CURLOPT_PINNEDPUBLICKEY takes it."""
    public = subprocess.run(["openssl", "x509", "-in", certificate, "-pubkey", "-noout"],
                            check=True, capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=public,
                         check=True, capture_output=True).stdout
    digest = subprocess.run(["openssl", "dgst", "-sha256", "-binary"], input=der,
                            check=True, capture_output=True).stdout
    return "sha256//" + base64.b64encode(digest).decode()


def child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def curl_cpu(arguments, url, count):
    """CPU seconds of one `curl` process making `count` requests to `url` on one connection."""
    target = f"{url}?[1-{count}]" if count > 1 else url
    before = child_cpu()
    subprocess.run(["curl", "-s", "-o", "/dev/null", *arguments, target], check=True, stdin=subprocess.DEVNULL)
    return child_cpu() - before


def main():
    parser = argparse.ArgumentParser(description="libcurl's own CPU per request on a kept TLS connection.")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--emulator", default=".build/release/cipher-station-emulator")
    parser.add_argument("--tls-front", default="scripts/tls-front.py")
    arguments = parser.parse_args()
    for tool in ("curl", "openssl"):
        if shutil.which(tool) is None:
            sys.exit(f"libcurl-floor: needs the `{tool}` command (Debian package {tool})")
    if not os.path.exists(arguments.emulator):
        sys.exit(f"libcurl-floor: no {arguments.emulator}; run "
                 "`swift build -c release --product cipher-station-emulator` first")

    work = tempfile.mkdtemp(prefix="libcurl-floor-")
    processes = []
    try:
        station_port, gateway_port = free_port(), free_port()
        processes.append(subprocess.Popen(
            [arguments.emulator, "--port", str(station_port), "--gateway-port", str(gateway_port),
             "--data-dir", os.path.join(work, "data"), "--log", os.path.join(work, "emulator.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        plain = f"http://127.0.0.1:{station_port}/health"
        wait_for(plain)
        front = subprocess.Popen(
            [sys.executable, arguments.tls_front, "--backend-port", str(station_port),
             "--make-self-signed", os.path.join(work, "tls"), "--exit-on-stdin-eof"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        processes.append(front)
        line = front.stdout.readline().split()
        if len(line) != 2 or line[0] != "LISTENING":
            sys.exit("libcurl-floor: the TLS front did not start")
        tls = f"https://127.0.0.1:{line[1]}/health"
        pin = ["-k", "--pinnedpubkey", pin_of(os.path.join(work, "tls", "cert.pem"))]

        # The six headers of a signed call, at their real sizes (values are placeholders: the
        # station answers 401, which costs the client what any small answer does).
        signature = base64.b64encode(os.urandom(3309)).decode()
        signed = []
        for name, value in (("x-cipher-uid", "u" * 32), ("x-cipher-device", "d" * 32),
                            ("x-cipher-ts", str(int(time.time()))), ("x-cipher-nonce", "n" * 32),
                            ("x-cipher-body-sha256", "0" * 64), ("x-cipher-signature", signature)):
            signed += ["-H", f"{name}: {value}"]
        body = '{"uid":"%s","device_uid":"%s","post_cid":"%s"}' % ("u" * 32, "d" * 32, "Q" * 46)
        body += " " * max(0, 200 - len(body))
        cases = [
            ("plain HTTP, GET /health", [], plain),
            ("TLS pinned, GET /health", pin, tls),
            ("TLS pinned, GET /health + six x-cipher headers", pin + signed, tls),
            ("TLS pinned, POST 200-byte JSON + six x-cipher headers", pin + signed +
             ["-H", "Content-Type: application/json", "--data-binary", body], tls),
        ]
        version = subprocess.run(["curl", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
        print(version)
        samples = {name: [] for name, _, _ in cases}
        for _ in range(arguments.rounds):
            for name, options, url in cases:
                one = curl_cpu(options, url, 1)
                many = curl_cpu(options, url, arguments.requests)
                samples[name].append(max(0.0, many - one) / (arguments.requests - 1))
        for name, _, _ in cases:
            values = samples[name]
            print(f"{name}: {statistics.median(values) * 1e6:.0f} µs CPU per request "
                  f"(rounds {min(values) * 1e6:.0f}–{max(values) * 1e6:.0f}, {arguments.requests} requests each)")
    finally:
        for process in processes:
            if process.stdin:
                process.stdin.close()  # the TLS front stops when its standard input closes
            else:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
