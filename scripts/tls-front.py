#!/usr/bin/env python3
"""A loopback TLS front: terminates TLS and pipes the plain bytes to an HTTP backend.

Real stations are reached over TLS (run.py serves a self-signed certificate); the emulator and
LoopbackHTTPServer speak plain HTTP/1.1. Put this in front of one to test and benchmark a client
over real TLS. Standard library only (asyncio + ssl), so it needs no install.

Usage:
  tls-front.py --backend-port PORT (--cert CERT.pem --key KEY.pem | --make-self-signed DIR)
               [--port 0] [--exit-on-stdin-eof]

  --backend-port      the plain-HTTP backend on 127.0.0.1 (the emulator, a LoopbackHTTPServer)
  --cert, --key       the PEM certificate and unencrypted private key to serve
  --make-self-signed  use DIR/cert.pem and DIR/key.pem, first making them exactly as upstream's
                      run.py does when absent:
                        openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem \
                            -days 365 -subj /CN=cipherstation
  --port              the port to listen on, 127.0.0.1 only (default 0: any free port)
  --exit-on-stdin-eof stop when standard input closes (how a parent process stops it, even if
                      that parent dies first)

Once listening it prints one line, "LISTENING <port>", to standard output, then stays quiet there
(errors go to standard error). It stops on SIGTERM or SIGINT. ALPN offers only http/1.1, which is
what the backend speaks. The public-key pin of the certificate, as CurlTransport and HPKP write it:
  openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der \
      | openssl dgst -sha256 -binary | base64

Example, from a shell script:
  exec 3< <(python3 scripts/tls-front.py --backend-port 8080 --make-self-signed /tmp/tls)
  read -r _ port <&3        # "LISTENING 40123"
  curl --pinnedpubkey "sha256//$(...pin command above...)" -k "https://127.0.0.1:$port/"
"""
import argparse
import asyncio
import os
import signal
import ssl
import subprocess
import sys
import threading

CHUNK = 256 * 1024


def make_self_signed(directory):
    """DIR/cert.pem and DIR/key.pem, made by run.py's own openssl command when missing."""
    os.makedirs(directory, exist_ok=True)
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    if not (os.path.exists(cert) and os.path.exists(key)):
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem",
             "-out", "cert.pem", "-days", "365", "-subj", "/CN=cipherstation"],
            cwd=directory, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
    return cert, key


async def pipe(reader, writer):
    """Copies until end of input, then closes the other side (TLS has no half-close)."""
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError, OSError):
        pass
    finally:
        writer.close()


async def serve_client(backend_port, client_reader, client_writer):
    try:
        backend_reader, backend_writer = await asyncio.open_connection("127.0.0.1", backend_port)
    except OSError as error:
        print(f"tls-front: backend 127.0.0.1:{backend_port}: {error}", file=sys.stderr)
        client_writer.close()
        return
    # Whichever side ends first ends the exchange, so a backend closing mid-body reaches the client.
    upstream = asyncio.ensure_future(pipe(client_reader, backend_writer))
    downstream = asyncio.ensure_future(pipe(backend_reader, client_writer))
    try:
        await asyncio.wait([upstream, downstream], return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        pass  # the front is stopping: open exchanges end with it, quietly
    finally:
        for task in (upstream, downstream):
            task.cancel()
        backend_writer.close()
        client_writer.close()


def watch_stdin(loop, stop):
    """Reads standard input to its end, then asks the loop to stop."""
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except OSError:
        pass
    loop.call_soon_threadsafe(stop.set)


async def main():
    parser = argparse.ArgumentParser(description="Loopback TLS front for a plain-HTTP backend.")
    parser.add_argument("--backend-port", type=int, required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--make-self-signed", metavar="DIR")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    arguments = parser.parse_args()
    if arguments.make_self_signed:
        cert, key = make_self_signed(arguments.make_self_signed)
    elif arguments.cert and arguments.key:
        cert, key = arguments.cert, arguments.key
    else:
        parser.error("give --cert and --key, or --make-self-signed DIR")

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["http/1.1"])

    server = await asyncio.start_server(
        lambda reader, writer: serve_client(arguments.backend_port, reader, writer),
        "127.0.0.1", arguments.port, ssl=context, ssl_handshake_timeout=30)
    port = server.sockets[0].getsockname()[1]
    print(f"LISTENING {port}", flush=True)

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for name in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(name, stop.set)
    if arguments.exit_on_stdin_eof:
        threading.Thread(target=watch_stdin, args=(loop, stop), daemon=True).start()
    async with server:
        await stop.wait()


if __name__ == "__main__":
    # A parent started from a thread that blocks these (Swift concurrency threads do) passes the
    # mask on; unblock them so that SIGTERM and SIGINT work.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
