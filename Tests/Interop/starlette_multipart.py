"""Python half of MultipartFormTests: parses a multipart body the way the station does.

The station (FastAPI) reads `multipart/form-data` with Starlette's MultiPartParser over
python-multipart, with FastAPI's limits (1000 files, 1000 fields, 1 MiB per field). Input on stdin:
{"content_type": "...", "body_path": "..."}; output: the parsed items in order, fields with their
value, files with filename, content type, size and SHA-256.
"""
import asyncio
import hashlib
import json
import sys

from starlette.datastructures import Headers, UploadFile
from starlette.formparsers import MultiPartParser


async def parse(request):
    headers = Headers({"content-type": request["content_type"]})

    async def body():
        with open(request["body_path"], "rb") as handle:
            while True:
                chunk = handle.read(65536)
                if not chunk:
                    break
                yield chunk
        yield b""

    parser = MultiPartParser(headers, body(), max_files=1000, max_fields=1000, max_part_size=1024 * 1024)
    form = await parser.parse()
    items = []
    for name, value in form.multi_items():
        if isinstance(value, UploadFile):
            data = await value.read()
            items.append({
                "name": name,
                "filename": value.filename,
                "content_type": value.content_type,
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            })
        else:
            items.append({"name": name, "value": value})
    return items


def main():
    request = json.load(sys.stdin)
    try:
        result = {"items": asyncio.run(parse(request)), "error": None}
    except Exception as error:  # reported to the Swift side, which asserts on it
        result = {"items": [], "error": f"{type(error).__name__}: {error}"}
    json.dump(result, sys.stdout)


main()
