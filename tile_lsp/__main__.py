"""`python -m tile_lsp`: the Tile IR language server on stdio (or `--tcp` for debugging)."""

from __future__ import annotations

import argparse
import logging
import sys

from .framing import MAX_MESSAGE_BYTES, FramedInput


def main(argv: list[str] | None = None) -> int:
    from .server import MAX_FILE_BYTES

    ap = argparse.ArgumentParser(prog="python -m tile_lsp", description="The Tile IR language server.")
    ap.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    ap.add_argument("--tcp", action="store_true", help="listen on a TCP port instead (for debugging)")
    ap.add_argument("--host", default="127.0.0.1", help="with --tcp: the address to listen on")
    ap.add_argument("--port", type=int, default=2087, help="with --tcp: the port (default 2087)")
    ap.add_argument("--log-file", help="write the server's log here")
    ap.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    ap.add_argument(
        "--max-message-bytes",
        type=int,
        default=MAX_MESSAGE_BYTES,
        help=f"refuse (and skip) protocol messages longer than this (default {MAX_MESSAGE_BYTES})",
    )
    ap.add_argument(
        "--max-file-bytes",
        type=int,
        default=MAX_FILE_BYTES,
        help=f"the largest file tileir/convertFromBytecode reads (default {MAX_FILE_BYTES})",
    )
    args = ap.parse_args(argv)
    level = logging.DEBUG if args.verbose else logging.INFO
    if args.log_file:
        logging.basicConfig(filename=args.log_file, level=level)
    else:  # stderr: stdout carries the protocol
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING if not args.verbose else level)
    if not args.verbose:
        # pygls logs every message it sends at INFO (a whole document's semantic tokens:
        # megabytes per request).
        logging.getLogger("pygls").setLevel(logging.WARNING)

    from .server import create_server

    server = create_server()
    server.max_file_bytes = args.max_file_bytes
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        # pygls reads stdin through FramedInput, which never hands it an oversized or
        # malformed message (see tile_lsp.framing).
        server.start_io(FramedInput(sys.stdin.buffer, args.max_message_bytes), sys.stdout.buffer)
    log = logging.getLogger("tile_lsp")
    log.info("tile-lsp: input ended; exiting")
    return 0


if __name__ == "__main__":
    sys.exit(main())
